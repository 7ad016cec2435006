"""Names find their definitions, words find their forms, source before tests (issue 20, 1-3).

Real git repositories, a real tantivy copy and a real Chroma store; the fake embedder, so the
dense half is noise and what is asserted is the name field, the stemmer and the kind prior.
"""
from __future__ import annotations

import json
import shutil
from pathlib import Path

from codevouch import Index
from codevouch.embedding import FakeEmbedder
from codevouch.retriever.defined import LEXICAL_PROPOSALS
from codevouch.retriever.settings import Settings
from codevouch.store import Ledger, lexindex
from codevouch.store.lexical import definition_keys, document, names_tests, query_name_keys
from tests.clihelp import cv
from tests.gitrepo import Repo

# Chunks that only use `raise_for_status` say it far more often than its definition does, so
# by words alone they outrank it.
USES = "\n\n".join(f'''def check_{i}(response):
    response.raise_for_status()
    response.raise_for_status()
    if response.status_code:
        response.raise_for_status()
    return response.raise_for_status()
''' for i in range(4))
FILES = {
    "web/models.py": '''class Response:
    def __init__(self, status_code):
        self.status_code = status_code

    def raise_for_status(self):
        if self.status_code >= 400:
            raise ValueError(self.status_code)
        return self
''',
    "web/checks.py": USES,
    "web/decoders.py": '''class GZipDecoder:
    def decode(self, data):
        import gzip
        return gzip.decompress(data)


class IdentityDecoder:
    def decode(self, data):
        return data
''',
    "web/client.py": '''class Client:
    def send_request(self, request):
        return self.transport.handle(request)  # blocking
''',
    "web/aclient.py": '''class AsyncClient:
    async def send_request(self, request):
        return await self.transport.handle_async(request)
''',
    "web/transport.py": '''class Transport:
    def __init__(self, retries=0):
        self.retries = retries

    def handle(self, request):
        for attempt in range(self.retries + 1):
            return self.connect(request)
''',
}


def _index(repo: Repo, index_dir: Path, files: dict[str, str] = FILES, **settings: object) -> Index:
    repo.commit_files(files)
    idx = Index(repo.root, index_dir, embedder=FakeEmbedder(), settings=Settings(**settings))  # type: ignore[arg-type]
    idx.build()
    return idx


def test_query_name_keys_spell_names_as_written() -> None:
    assert query_name_keys("raise_for_status") == ["raise_for_status", "~raiseforstatus"]
    assert query_name_keys("raise for status") == ["~raiseforstatus"]
    assert query_name_keys("GZipDecoder") == ["gzipdecoder", "~gzipdecoder"]
    assert query_name_keys("Client.send") == ["client.send"]
    # A sentence names no definition, unless it holds a token written as code.
    assert query_name_keys("how are redirects followed") == ["~howareredirectsfollowed"]
    assert query_name_keys("Return the Response object") == ["~returntheresponseobject"]
    assert query_name_keys("Like send_request, but without a body or any headers") == ["send_request", "~sendrequest"]
    assert names_tests("the pytest fixture for the client") and not names_tests("a contest of latest attempts")


def test_a_name_finds_its_definition_before_its_uses(repo: Repo, index_dir: Path) -> None:
    idx = _index(repo, index_dir)
    for query in ("raise_for_status", "Response.raise_for_status", "raise for status", "RAISE_FOR_STATUS"):
        hits = idx.search(query, k=5, validate=False)
        # The class is small: one chunk, whose symbol names the class only.
        assert (hits[0].path, hits[0].symbol) == ("web/models.py", "Response"), query
        assert hits[0].matched[0] == "definition-name", (query, hits[0].matched)
        assert all("definition-name" not in h.matched for h in hits[1:]), query
    # Without the name list and its tier, the chunks that use the name most win (the test can fail).
    plain = Index(repo.root, index_dir, embedder=FakeEmbedder(), settings=Settings(name_weight=0.0, name_first_words=0))
    assert plain.search("raise_for_status", k=1, mode="lexical", validate=False)[0].path == "web/checks.py"
    for query in ("g zip decoder", "GZipDecoder", "gzip decoder"):
        assert idx.search(query, k=1, validate=False)[0].symbol.startswith("GZipDecoder"), query


def test_several_definitions_of_one_name_rank_by_the_rest_of_the_query(repo: Repo, index_dir: Path) -> None:
    idx = _index(repo, index_dir)
    first = idx.search("send_request async", k=2, mode="lexical", validate=False)
    assert [h.path for h in first] == ["web/aclient.py", "web/client.py"]
    assert all(h.matched[0] == "definition-name" for h in first)
    first = idx.search("send_request blocking", k=2, mode="lexical", validate=False)
    assert [h.path for h in first] == ["web/client.py", "web/aclient.py"]


def test_words_meet_their_forms_through_the_stemmer(repo: Repo, index_dir: Path) -> None:
    idx = _index(repo, index_dir)
    for query in ("retrying", "retry", "retries"):
        hits = idx.search(query, k=1, mode="lexical", validate=False)
        assert hits and hits[0].path == "web/transport.py", query
        assert hits[0].matched == ("lexical",), hits[0].matched


SHARED = '''def follow_redirects(response, limit):
    while response.is_redirect and limit:
        response = response.next_redirect()
        limit -= 1
    return response
'''


def test_tests_rank_below_source_unless_the_query_asks_for_them(repo: Repo, index_dir: Path) -> None:
    files = {"web/redirects.py": SHARED, "tests/test_redirects.py": SHARED.replace("follow_redirects", "follow")}
    idx = _index(repo, index_dir, files)
    unweighted = Index(repo.root, index_dir, embedder=FakeEmbedder(),
                       settings=Settings(kind_weights={"source": 1.0, "test": 1.0, "docs": 1.0, "config": 1.0}))
    query = "the next redirect of a response"
    assert idx.search(query, k=1, validate=False)[0].path == "web/redirects.py"
    both = unweighted.search(query, k=2, validate=False)
    # The test chunk's lexical document is the longer match here (its path says test and redirects) ...
    assert {h.path for h in both} == {"web/redirects.py", "tests/test_redirects.py"}
    # ... and a query that names tests ranks the test chunk as if it were source.
    asked = idx.search(query + " test", k=2, validate=False)
    plain = unweighted.search(query + " test", k=2, validate=False)
    assert [h.path for h in asked] == [h.path for h in plain]
    assert [round(h.score, 9) for h in asked] == [round(h.score, 9) for h in plain]
    assert idx.search(query, k=1, kinds=["test"], validate=False)[0].path == "tests/test_redirects.py"
    # Settings.named_tests_weight sets how far the rule lifts them: 0.0 turns it off (the sentence's own
    # test weight stays), 0.5 lifts them to half of source's.
    unweighted_test = {h.path: h.score for h in plain}["tests/test_redirects.py"]
    sentence_test = Settings().sentence_kind_weights["test"]  # type: ignore[index]
    for named, weight in ((0.0, sentence_test), (0.5, 0.5)):
        lifted = Index(repo.root, index_dir, embedder=FakeEmbedder(), settings=Settings(named_tests_weight=named))
        got = {h.path: h.score for h in lifted.search(query + " test", k=2, validate=False)}
        assert round(got["tests/test_redirects.py"], 9) == round(unweighted_test * weight, 9), named


def test_an_older_lexical_copy_is_bypassed_then_rebuilt(repo: Repo, index_dir: Path) -> None:
    idx = _index(repo, index_dir)
    ledger = Ledger(index_dir)
    try:
        (copy,) = [ledger.copy_of(b) for b in ledger.branches()]
        assert copy is not None
        space, stamp = copy.space, ledger.lexical_stamp(copy.space)
    finally:
        ledger.close()
    assert stamp is not None
    current = lexindex.index_path(index_dir, copy)
    assert lexindex.read_stamp(current) == copy.stamp
    # The copy as the release before made it: its old path (the stamp's hash), terms only.
    import hashlib

    import tantivy
    old = lexindex.space_dir(index_dir, space) / hashlib.sha256(stamp.encode()).hexdigest()[:20]
    builder = tantivy.SchemaBuilder()
    builder.add_text_field("id", stored=True, tokenizer_name="raw")
    builder.add_text_field("terms", stored=False, tokenizer_name="en_stem")
    old.mkdir(parents=True)
    tantivy.Index(builder.build(), path=str(old)).writer(heap_size=15_000_000, num_threads=1).commit()
    (old / lexindex.STAMP).write_text(stamp)
    shutil.rmtree(current)
    lexindex._open.clear()
    # Never read (it has no name field): the search writes the copy of this schema.
    hits = idx.search("raise_for_status", k=5, validate=False)
    assert "web/models.py" in [h.path for h in hits]
    idx.build()      # a no-op build writes the copy of this schema and prunes the old one
    assert lexindex.read_stamp(current) == copy.stamp and not old.exists()
    hits = idx.search("raise_for_status", k=1, validate=False)
    assert hits[0].path == "web/models.py" and hits[0].matched[0] == "definition-name"
    assert lexindex.search_names(index_dir, copy, ["raise_for_status"], 5)


def test_search_json_says_what_matched(repo: Repo, index_dir: Path) -> None:
    _index(repo, index_dir)
    out = cv("search", "raise_for_status", "--json", "-k", "3", "--no-validate", "--repo", str(repo.root),
             index=index_dir)
    assert out.returncode == 0, out.stderr
    hits = json.loads(out.stdout)
    assert hits[0]["matched"][0] == "definition-name" and hits[0]["path"] == "web/models.py"
    assert all(set(h["matched"]) <= {"definition-name", "lexical", "dense"} and h["matched"] for h in hits)


def test_the_definitions_own_case_comes_first_and_identifier_parts_open_nothing(repo: Repo, index_dir: Path) -> None:
    idx = _index(repo, index_dir, {
        "ui/bars.py": "def progressbar(items):\n    return ProgressBar(items)\n",
        "ui/impl.py": "class ProgressBar:\n    def __init__(self, items):\n        self.items = items\n",
        "ui/prompts.py": "def hidden_prompt_func(prompt):\n    return getpass(prompt)\n\n\n"
                         "def prompt(text):\n    return input(text)\n",
    })
    assert idx.search("progressbar", k=1, validate=False)[0].path == "ui/bars.py"
    assert idx.search("ProgressBar", k=1, validate=False)[0].path == "ui/impl.py"
    # `func` in `hidden_prompt_func` is a part of a name, not Go's keyword: that chunk defines no `prompt`.
    assert definition_keys(document("def hidden_prompt_func(prompt):\n    return getpass(prompt)\n", "ui/p.py",
                                    "hidden_prompt_func"), "hidden_prompt_func") == [
        "hidden_prompt_func", "~hiddenpromptfunc"]
    hits = idx.search("prompt", k=3, validate=False)
    assert "def prompt" in hits[0].text and [h.matched[0] for h in hits].count("definition-name") == 1


def test_a_go_methods_receiver_is_no_definition(repo: Repo, index_dir: Path) -> None:
    methods = "\n".join(f'''// {name} runs the command's {name} step.
func (cmd *Command) {name}() error {{
\tif cmd.parent != nil {{
\t\treturn cmd.parent.{name}()
\t}}
\treturn nil
}}
''' for name in ("Execute", "Validate", "Prepare"))
    idx = _index(repo, index_dir, {
        "cli/command.go": f"package cli\n\ntype Command struct {{\n\tparent *Command\n}}\n\n{methods}",
        "cli/run.go": "package cli\n\nfunc cmd(args []string) *Command {\n\treturn &Command{}\n}\n",
    })
    hits = idx.search("cmd", k=5, validate=False)
    assert hits[0].path == "cli/run.go" and hits[0].matched[0] == "definition-name"
    # Every method chunk says `cmd` more often than run.go does; none of them defines it.
    assert [h.path for h in hits if "definition-name" in h.matched] == ["cli/run.go"]
    assert any(h.path == "cli/command.go" for h in hits)
    assert definition_keys(document("func (cmd *Command) Execute() error {", "cli/command.go", "Command.Execute"),
                           "Command.Execute") == ["command.execute", "execute", "~execute"]


def test_an_implementation_ranks_before_its_declaration(repo: Repo, index_dir: Path) -> None:
    # The declaration file says `hideHelp` in every line of its doc comment: by words it wins.
    idx = _index(repo, index_dir, {
        "lib/option.js": "function hideHelp(option, hide = true) {\n  option.hidden = !!hide;\n  return option;\n}\n\n"
                         "module.exports = { hideHelp };\n",
        "typings/index.d.ts": "/**\n * hideHelp: hide the option in help.\n * hideHelp(option) hides it,\n"
                              " * hideHelp(option, false) shows it again.\n */\n"
                              "export function hideHelp(option: Option, hide?: boolean): Option;\n",
        "lib/stubs.pyi": "def hide_help(option: Option, hide: bool = ...) -> Option:\n    '''hide_help hides; hide_help "
                         "shows.'''\n    ...\n",
        "lib/options.py": "def hide_help(option, hide=True):\n    option.hidden = bool(hide)\n    return option\n",
    })
    for query, implementation, declaration in (("hideHelp", "lib/option.js", "typings/index.d.ts"),
                                               ("hide_help", "lib/options.py", "lib/stubs.pyi")):
        hits = idx.search(query, k=3, mode="lexical", validate=False)
        assert [h.path for h in hits[:2]] == [implementation, declaration], query
        assert all(h.matched[0] == "definition-name" for h in hits[:2]), query
        # The declaration's words score higher; the rule, not the score, puts it second.
        assert hits[1].score > hits[0].score, query


def test_a_long_name_and_its_words_find_the_definition(repo: Repo, index_dir: Path) -> None:
    # Six parts: more than a short query's four words, yet one name as a whole. The callers say
    # it far more often than the definition does.
    calls = "\n\n".join(f"def release_{i}(ctx):\n    build_wheel_for_abi3_target(ctx)\n    "
                        f"build_wheel_for_abi3_target(ctx)\n    return build_wheel_for_abi3_target(ctx)\n"
                        for i in range(4))
    idx = _index(repo, index_dir, {
        "build/wheels.py": "def build_wheel_for_abi3_target(ctx):\n    return ctx.compile(abi='abi3')\n",
        "build/release.py": calls,
    })
    for query in ("build_wheel_for_abi3_target", "build wheel for abi 3 target", "BuildWheelForAbi3Target"):
        hits = idx.search(query, k=3, validate=False)
        assert hits[0].path == "build/wheels.py" and hits[0].matched[0] == "definition-name", query
        assert all("definition-name" not in h.matched for h in hits[1:]), query
    # A sentence still names nothing by the code it mentions in passing (only its squashed whole,
    # which no definition is called).
    sentence = "call build_wheel_for_abi3_target once per release"
    assert "build_wheel_for_abi3_target" in query_name_keys(sentence)
    assert query_name_keys(sentence, whole_only=True) == ["~callbuildwheelforabi3targetonceperrelease"]


def test_a_function_assigned_to_a_member_is_found_by_its_name(repo: Repo, index_dir: Path) -> None:
    """`options._root = ...` and `Suspense.prototype._childDidSuspend = function ...` define the
    names `_root` and `_childDidSuspend`: the name tier finds them before the chunks that only
    call them (which say the names more often)."""
    calls = "\n\n".join(f"export function step{i}(vnode, dom) {{\n  options._root(vnode, dom);\n"
                        f"  options._root(vnode, dom);\n  s._childDidSuspend(vnode);\n  return s._childDidSuspend(vnode);\n}}"
                        for i in range(4))
    idx = _index(repo, index_dir, {
        "src/render.js": "import options from './options';\n\noptions._root = (vnode, parentDom) => {\n"
                         "  return parentDom;\n};\n\nSuspense.prototype._childDidSuspend = function (promise) {\n"
                         "  this._pending = promise;\n};\n",
        "src/steps.js": calls + "\n",
    })
    for query, symbol in (("_root", "options._root"), ("_childDidSuspend", "Suspense._childDidSuspend")):
        hits = idx.search(query, k=3, validate=False)
        assert hits[0].path == "src/render.js", (query, [(h.path, h.symbol) for h in hits])
        assert symbol in hits[0].symbol.split(", "), hits[0].symbol     # small neighbours merge into one chunk
        assert hits[0].matched[0] == "definition-name", query
        assert [h.path for h in hits if "definition-name" in h.matched] == ["src/render.js"], query


def test_a_method_that_no_keyword_opens_is_found_by_its_name(repo: Repo, index_dir: Path) -> None:
    """A JavaScript class small enough to be one chunk carries the class's symbol only, and its
    methods (`updateChildren() {`) have no keyword before their names for the name field to read.
    The syntax still defines them: the name tier finds the class's chunk before the chunks that
    only call the method (which say its name more often)."""
    calls = "\n\n".join(f"export function tick{i}(comp) {{\n  comp.updateChildren();\n  comp.updateChildren();\n"
                        f"  return comp.updateChildren();\n}}" for i in range(4))
    idx = _index(repo, index_dir, {
        "demo/fragments.jsx": "export default class FragmentComp extends Component {\n"
                              "  componentDidMount() {\n    setInterval(() => this.tick(), 1000);\n  }\n\n"
                              "  updateChildren() {\n    this.setState(s => ({ n: s.n + 1 }));\n  }\n}\n",
        "demo/ticks.js": calls + "\n",
        "src/Buffer.java": "class ConsoleBuffer {\n  void flushAll() {\n    buffer.clear();\n  }\n"
                           "  int size() {\n    return buffer.size();\n  }\n}\n",
        "src/Users.java": "class Users {\n  void save() {\n    out.flushAll();\n    out.flushAll();\n"
                          "    out.flushAll();\n  }\n}\n",
    })
    for query, path in (("updateChildren", "demo/fragments.jsx"), ("flushAll", "src/Buffer.java")):
        hits = idx.search(query, k=3, validate=False)
        assert hits[0].path == path, (query, [(h.path, h.symbol, h.matched) for h in hits])
        assert hits[0].matched[0] == "definition-name", (query, hits[0].matched)
        assert [h.path for h in hits if "definition-name" in h.matched] == [path], query


def test_an_accessor_named_by_a_common_word_is_found_among_many_chunks_that_say_it(repo: Repo, index_dir: Path) -> None:
    """`get value()` in a TypeScript class kept whole as one chunk: no keyword opens it, and
    `value` is said far more often elsewhere, so the class's chunk is not among the first chunks
    of the lexical list (defined.LEXICAL_PROPOSALS). The name field holds what the chunk's own
    parse defines (lexical.document), so the name tier finds it there."""
    users = {f"src/use{i}.ts": "".join(f"export function read{i}x{j}(value: number): number {{\n"
                                       f"  const value2 = value + value;\n  return value2 * value;\n}}\n\n"
                                       for j in range(3)) for i in range(2 * LEXICAL_PROPOSALS)}
    idx = _index(repo, index_dir, {
        **users,
        "src/BehaviorSubject.ts": "export class BehaviorSubject<T> extends Subject<T> {\n"
                                  "  constructor(private _value: T) {\n    super();\n  }\n\n"
                                  "  get value(): T {\n    return this.getValue();\n  }\n\n"
                                  "  getValue(): T {\n    return this._value;\n  }\n}\n",
    })
    words_only = Index(repo.root, index_dir, embedder=FakeEmbedder(), settings=Settings(name_first_words=0))
    lexical_first = [h.path for h in words_only.search("value", k=LEXICAL_PROPOSALS, mode="lexical", validate=False)]
    assert "src/BehaviorSubject.ts" not in lexical_first     # the words alone would not propose it
    hits = idx.search("value", k=3, validate=False)
    assert hits[0].path == "src/BehaviorSubject.ts", [(h.path, h.symbol, h.matched) for h in hits]
    assert hits[0].matched[0] == "definition-name"
    assert [h.path for h in hits if "definition-name" in h.matched] == ["src/BehaviorSubject.ts"]


def test_a_name_with_a_dollar_is_one_name(repo: Repo, index_dir: Path) -> None:
    """`$` is part of a JavaScript name: `AxiosError$1` (a bundle's renamed copy) is its own
    definition, not `AxiosError`, and `clicks$` in a sentence is written as code."""
    assert query_name_keys("AxiosError$1") == ["axioserror$1", "~axioserror1"]
    assert "clicks$" in query_name_keys("where is clicks$ merged")
    assert query_name_keys("costs 5 $ each") == []
    idx = _index(repo, index_dir, {
        "lib/AxiosError.js": "function AxiosError(message, code) {\n  this.message = message;\n  this.code = code;\n}\n",
        "dist/axios.js": "function AxiosError$1(message, code) {\n  Error.call(this);\n  this.message = message;\n}\n",
    })
    hits = idx.search("AxiosError$1", k=2, validate=False)
    assert (hits[0].path, hits[0].symbol) == ("dist/axios.js", "AxiosError$1"), [(h.path, h.symbol) for h in hits]
    assert [h.path for h in hits if "definition-name" in h.matched] == ["dist/axios.js"]


def test_an_uncommitted_method_that_no_keyword_opens_is_found_by_its_name(repo: Repo, index_dir: Path) -> None:
    """The same in the working tree's overlay: a method added since the build is a definition."""
    calls = "\n\n".join(f"export function tick{i}(comp) {{\n  comp.resetCounters();\n  comp.resetCounters();\n"
                        f"  return comp.resetCounters();\n}}" for i in range(4))
    idx = _index(repo, index_dir, {"demo/ticks.js": calls + "\n",
                                   "demo/counter.jsx": "export class Counter {\n  render() {\n    return 1;\n  }\n}\n"})
    (repo.root / "demo/counter.jsx").write_text("export class Counter {\n  render() {\n    return 1;\n  }\n\n"
                                                "  resetCounters() {\n    this.n = 0;\n  }\n}\n")
    hits = idx.search("resetCounters", k=3, validate=False)
    assert (hits[0].path, hits[0].record.origin) == ("demo/counter.jsx", "uncommitted"), \
        [(h.path, h.record.origin, h.matched) for h in hits]
    assert hits[0].matched[0] == "definition-name", hits[0].matched


def _long_definition() -> str:
    """`flush_batch`, long enough to be cut into windows; its later windows say its name more
    often than the first (as attrs' `attrs` does), so by words they outrank the one with `def`."""
    body = "\n".join(f"    step_{i} = compute_value_{i}(items, limit)  # keep going" for i in range(150))
    tail = "\n".join(f"    flush_batch.calls.append(flush_batch.last)  # flush_batch {i}" for i in range(12))
    return f"def flush_batch(items, limit):\n{body}\n{tail}\n    return items\n"


def test_prose_that_mentions_a_name_leaves_the_name_list_to_definitions(repo: Repo, index_dir: Path) -> None:
    """Prose gets name keys from its words ("the function flush_batch"), which the search then
    refuses (prose defines nothing). They must not fill the name list's depth: a long
    definition's window that holds its `def` line was cut out of it, and the hit tagged
    `definition-name` was a later window of the body."""
    files = {"pkg/batch.py": _long_definition()}
    files.update({f"docs/page_{i}.md": f"# Page {i}\n\nCall the function flush_batch to flush.\n" for i in range(40)})
    idx = _index(repo, index_dir, files)
    ledger = Ledger(index_dir)
    try:
        (state,) = ledger.branches()
        windows = [r for r in ledger.branch_chunks(state) if r.path == "pkg/batch.py"]
    finally:
        ledger.close()
    assert len(windows) >= 3 and all(r.symbol == "flush_batch" for r in windows)
    (hit,) = idx.search("flush_batch", k=1, mode="lexical", validate=False)
    assert (hit.path, hit.matched[0]) == ("pkg/batch.py", "definition-name")
    assert hit.record.start_line == 1, (hit.record.start_line, hit.record.end_line)


def test_the_own_case_reads_the_definitions_merged_into_a_chunk(repo: Repo, index_dir: Path) -> None:
    # Middleware's small file is one chunk whose symbol (`<module>, Shop`) names neither `Logger`
    # nor `Middleware`; the helper's chunk names its method `logger`, said more often.
    idx = _index(repo, index_dir, {
        "lib/shop/middleware/logger.rb": 'require "logger"\n\nmodule Shop\n  module Middleware\n'
                                         '    class Logger\n      def initialize(app)\n        @app = app\n'
                                         '      end\n    end\n  end\nend\n',
        "lib/shop/helpers.rb": "module Shop\n  module Helpers\n    # The request's logger, or a null logger.\n"
                               "    def logger\n      request.logger || Logger.new(nil)\n    end\n  end\nend\n",
    })
    assert idx.search("Logger", k=1, validate=False)[0].path == "lib/shop/middleware/logger.rb"
    assert idx.search("logger", k=1, validate=False)[0].path == "lib/shop/helpers.rb"
