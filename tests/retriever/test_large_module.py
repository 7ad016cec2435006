"""A large module's neighbours, with the real packaged model: a sentence that describes one small
definition among many similar ones, in a chunk it shares with a neighbour, and a type beside them
whose field names spell the sentence's words."""
from __future__ import annotations

from pathlib import Path

import pytest

from codevouch import Index
from codevouch.retriever.settings import Settings
from tests.gitrepo import Repo

pytestmark = pytest.mark.model

# maturin 1.5.1's src/pyproject_toml.rs (MIT OR Apache-2.0), lines 121-295, its doc comments
# removed as the quality figure removes them (bench/codevouch_bench/quality.py); the first doc
# sentence of `PyProjectToml::maturin` is QUERY.
PYPROJECT_TOML_RS = """\
#[derive(Serialize, Deserialize, Debug, Clone, Default)]
#[serde(rename_all = "kebab-case")]
pub struct ToolMaturin {
    // maturin specific options

    pub module_name: Option<String>,

    pub include: Option<Vec<GlobPattern>>,

    pub exclude: Option<Vec<GlobPattern>>,

    pub bindings: Option<String>,

    #[serde(alias = "manylinux")]
    pub compatibility: Option<PlatformTag>,

    #[serde(default)]
    pub skip_auditwheel: bool,

    #[serde(default)]
    pub strip: bool,

    #[serde(default)]
    pub sdist_generator: SdistGenerator,

    pub python_source: Option<PathBuf>,

    pub python_packages: Option<Vec<String>>,

    pub data: Option<PathBuf>,

    pub targets: Option<Vec<CargoTarget>>,

    #[serde(default, rename = "target")]
    pub target_config: HashMap<String, TargetConfig>,
    // Some customizable cargo options

    pub profile: Option<String>,

    pub features: Option<Vec<String>>,

    pub all_features: Option<bool>,

    pub no_default_features: Option<bool>,

    pub manifest_path: Option<PathBuf>,

    pub frozen: Option<bool>,

    pub locked: Option<bool>,

    pub config: Option<Vec<String>>,

    pub unstable_flags: Option<Vec<String>>,

    pub rustc_args: Option<Vec<String>>,
}

#[derive(Serialize, Deserialize, Debug, Clone)]
#[serde(rename_all = "kebab-case")]
pub struct PyProjectToml {
    pub build_system: BuildSystem,

    pub project: Option<Project>,

    pub tool: Option<Tool>,
}

impl PyProjectToml {
    pub fn new(pyproject_file: impl AsRef<Path>) -> Result<PyProjectToml> {
        let path = pyproject_file.as_ref();
        let contents = fs::read_to_string(path)?;
        let pyproject = toml::from_str(&contents).with_context(|| {
            format!(
                "pyproject.toml at {} is invalid",
                pyproject_file.as_ref().display()
            )
        })?;
        Ok(pyproject)
    }

    pub fn project_name(&self) -> Option<&str> {
        self.project.as_ref().map(|project| project.name.as_str())
    }

    #[inline]
    pub fn maturin(&self) -> Option<&ToolMaturin> {
        self.tool.as_ref()?.maturin.as_ref()
    }

    pub fn module_name(&self) -> Option<&str> {
        self.maturin()?.module_name.as_deref()
    }

    pub fn include(&self) -> Option<&[GlobPattern]> {
        self.maturin()?.include.as_ref().map(AsRef::as_ref)
    }

    pub fn exclude(&self) -> Option<&[GlobPattern]> {
        self.maturin()?.exclude.as_ref().map(AsRef::as_ref)
    }

    pub fn bindings(&self) -> Option<&str> {
        self.maturin()?.bindings.as_deref()
    }

    pub fn compatibility(&self) -> Option<PlatformTag> {
        self.maturin()?.compatibility
    }

    pub fn skip_auditwheel(&self) -> bool {
        self.maturin()
            .map(|maturin| maturin.skip_auditwheel)
            .unwrap_or_default()
    }

    pub fn strip(&self) -> bool {
        self.maturin()
            .map(|maturin| maturin.strip)
            .unwrap_or_default()
    }

    pub fn sdist_generator(&self) -> SdistGenerator {
        self.maturin()
            .map(|maturin| maturin.sdist_generator)
            .unwrap_or_default()
    }

    pub fn python_source(&self) -> Option<&Path> {
        self.maturin()
            .and_then(|maturin| maturin.python_source.as_deref())
    }

    pub fn python_packages(&self) -> Option<&[String]> {
        self.maturin()
            .and_then(|maturin| maturin.python_packages.as_deref())
    }

    pub fn data(&self) -> Option<&Path> {
        self.maturin().and_then(|maturin| maturin.data.as_deref())
    }

    pub fn targets(&self) -> Option<Vec<CargoTarget>> {
        self.maturin().and_then(|maturin| maturin.targets.clone())
    }

    pub fn target_config(&self, target: &str) -> Option<&TargetConfig> {
        self.maturin()
            .and_then(|maturin| maturin.target_config.get(target))
    }

}
"""

QUERY = "Returns the values of `[tool.maturin]` in pyproject.toml"


@pytest.fixture(scope="module")
def built(tmp_path_factory: pytest.TempPathFactory) -> tuple[Repo, Path]:
    root = tmp_path_factory.mktemp("large-module")
    repo = Repo.create(root / "repo")
    repo.commit_files({"src/pyproject_toml.rs": PYPROJECT_TOML_RS})
    Index(repo.root, root / "index").build()
    return repo, root / "index"


def test_the_accessor_the_sentence_describes_ranks_above_the_type_its_words_spell(built: tuple[Repo, Path]) -> None:
    """`maturin` shares its chunk with `project_name`; the struct `ToolMaturin` is a chunk of its own.
    The dense list prefers the accessor's chunk (cosine 0.667 against 0.544), the own-words list
    the struct (`tool maturin`: both words in the query). As shipped, the dense list counts from half
    its best cosine (Settings.dense_floor) and the accessors' chunk is scored by its best name
    alone (Settings.own_words_per_name): the accessor first."""
    repo, index_dir = built
    hits = Index(repo.root, index_dir).search(QUERY, k=2)
    assert [h.record.symbol for h in hits] == ["PyProjectToml.project_name, PyProjectToml.maturin", "ToolMaturin"]


@pytest.mark.parametrize("settings", [Settings(dense_floor=0.0, own_words_per_name=False),
                                      Settings(own_words_per_name=False), Settings(dense_floor=0.0)],
                         ids=["before", "floor-only", "per-name-only"])
def test_without_either_the_struct_ranks_first(built: tuple[Repo, Path], settings: Settings) -> None:
    """Each change alone leaves the struct first: the dense list divided by its best (0.544 / 0.667
    counts 0.82), or the two accessors' words together held against them by BM25's length norm."""
    repo, index_dir = built
    assert Index(repo.root, index_dir, settings=settings).search(QUERY, k=1)[0].record.symbol == "ToolMaturin"
