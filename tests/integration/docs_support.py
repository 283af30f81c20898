"""The check that the docs list every case of a suite, so a page cannot fall behind the tests:
docs/bad-input.md (and docs/security.md) name each test, or each case of a catalogue, by name.
Each suite keeps a CatalogueDocs test that calls assert_listed with what it must find."""
import os

DOCS = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "docs")


def names_of_tests(*classes):
    """"Class.test_method" for every test method of `classes`."""
    return [f"{cls.__name__}.{name}" for cls in classes for name in dir(cls)
            if name.startswith("test_")]


def assert_listed(test, names, pages=("bad-input.md",), form="{}"):
    """Fails `test` with the names whose form.format(name) is missing from a page of docs/."""
    for page in pages:
        with open(os.path.join(DOCS, page), encoding="utf-8") as f:
            doc = f.read()
        missing = [name for name in names if form.format(name) not in doc]
        test.assertEqual(missing, [], f"add these to docs/{page}")
