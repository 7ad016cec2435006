"""A bare name with several definitions: the free definition before same-named members of
unrelated classes, unless the query qualifies the name (hono: `getPath` in utils/url.ts and
four aws-lambda `*Processor.getPath` methods).

A real git repository, real tree-sitter, tantivy and Chroma; the fake embedder, so the words decide.
"""
from __future__ import annotations

from pathlib import Path

from codevouch import Index
from codevouch.embedding import FakeEmbedder
from codevouch.retriever import defined
from codevouch.store import ChunkRecord
from tests.gitrepo import Repo

URL = '''export const getPath = (request: Request): string => {
  const url = request.url
  const start = url.indexOf('/', url.indexOf(':') + 4)
  const end = url.indexOf('?', start)
  return url.slice(start, end === -1 ? undefined : end)
}

export const getQueryStrings = (url: string): string => {
  const queryIndex = url.indexOf('?', 8)
  return queryIndex === -1 ? '' : '?' + url.slice(queryIndex + 1)
}
'''

def proc(name: str, field: str) -> str:
    return f'''export class {name}Processor extends EventProcessor {{
  protected getPath(event: {name}Event): string {{
    return event.{field}
  }}

  protected getMethod(event: {name}Event): string {{
    return event.httpMethod
  }}

  protected getHeaders(event: {name}Event): Headers {{
    const headers = new Headers()
    for (const [key, value] of Object.entries(event.headers ?? {{}})) {{
      if (value) {{
        headers.set(key, value)
      }}
    }}
    return headers
  }}

  protected getCookies(event: {name}Event, headers: Headers): void {{
    if (Array.isArray(event.cookies)) {{
      headers.set('Cookie', event.cookies.join('; '))
    }}
  }}

  createRequest(event: {name}Event): Request {{
    const url = this.getDomainName(event) + this.getPath(event) + this.getQueryString(event)
    const headers = this.getHeaders(event)
    const method = this.getMethod(event)
    const requestInit: RequestInit = {{
      headers,
      method,
    }}
    if (event.body) {{
      requestInit.body = event.isBase64Encoded ? Buffer.from(event.body, 'base64') : event.body
    }}
    if (event.requestContext?.identity?.sourceIp) {{
      headers.set('x-forwarded-for', event.requestContext.identity.sourceIp)
    }}
    this.getCookies(event, headers)
    return new Request(url, requestInit)
  }}

  protected setCookiesToResult(result: {name}Result, cookies: string[]): void {{
    result.multiValueHeaders = {{ 'set-cookie': cookies }}
  }}
}}

'''

AWS = "".join(proc(n, f) for n, f in [("EventV1", "path"), ("EventV2", "rawPath"), ("ALB", "path"), ("Lattice", "path")])


def _first(idx: Index, query: str) -> tuple[str, str]:
    top = idx.search(query, k=5, validate=False)[0].record
    return top.path, top.symbol.split(", ")[0]


def test_a_free_function_ranks_above_same_named_methods_unless_the_query_qualifies(repo: Repo,
                                                                                    index_dir: Path) -> None:
    repo.commit_files({"src/utils/url.ts": URL, "src/adapter/aws-lambda/handler.ts": AWS})
    idx = Index(repo.root, index_dir, embedder=FakeEmbedder(), record=False)
    idx.build()
    # the methods' chunks say "path" far more often: by words alone the first of them wins
    assert _first(idx, "get path") == ("src/utils/url.ts", "getPath")
    assert _first(idx, "getPath") == ("src/utils/url.ts", "getPath")
    assert _first(idx, "ALBProcessor.getPath") == ("src/adapter/aws-lambda/handler.ts", "ALBProcessor.getPath")


def _rec(symbol: str, path: str = "src/cargo_toml.rs") -> ChunkRecord:
    return ChunkRecord(id=symbol, repo="/r", path=path, branch="main", commit="c", commit_date="d", symbol=symbol,
                       start_line=1, end_line=3, indexed_at="t", blob_sha="b", text_hash="h", kind="source",
                       language="rust", status="live")


def test_only_a_free_definition_spelled_as_a_member_is_preferred() -> None:
    names = ["~remainingcoremetadata"]   # "remaining core metadata", squashed
    method, struct = _rec("CargoToml::remaining_core_metadata"), _rec("RemainingCoreMetadata")
    members = defined.member_names([method, struct], names)
    assert members == {"remaining_core_metadata"}
    assert not defined.freely(struct, names, members)   # a type, not the method's free twin
    assert defined.freely(_rec("remaining_core_metadata"), names, members)
