from tests.enginehelp import engine  # noqa: F401  (the fixture, for every test here)
