"""SQLite stays inside ``opt_suite/store/``: no other module imports or catches ``sqlite3``.

The store's connections raise :class:`opt_suite.store.schema.StoreDatabaseError` (a
``StoreError``) for every SQLite error, so the layers above handle one error type.
"""

from __future__ import annotations

import ast
import sqlite3
from pathlib import Path

import pytest

from opt_suite.store.schema import StoreDatabaseError, StoreError, connect

PACKAGE = Path(__file__).resolve().parents[1] / "opt_suite"


def test_no_module_outside_the_store_imports_sqlite3():
    found = []
    for path in sorted(PACKAGE.rglob("*.py")):
        name = path.relative_to(PACKAGE).as_posix()
        if name.startswith("store/"):
            continue
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, ast.Import) and any(a.name == "sqlite3" for a in node.names):
                found.append(name)
    assert found == []


def test_sqlite_errors_of_a_store_connection_are_store_errors(tmp_path):
    conn = connect(tmp_path / "results.sqlite", create=True)
    with pytest.raises(StoreDatabaseError) as caught:
        conn.execute("SELECT * FROM no_such_table")
    assert isinstance(caught.value, StoreError) and not isinstance(caught.value, sqlite3.Error)
    assert isinstance(caught.value.__cause__, sqlite3.OperationalError)
    with pytest.raises(StoreDatabaseError):
        conn.executemany("INSERT INTO no_such_table VALUES (?)", [(1,)])
    assert conn.execute("SELECT value FROM meta").fetchone() is not None
    conn.close()
