"""Test support, not product code: shipped in the package only for the test suite and the conformance runner.

- `sidespin.testing.conformance`: `python -m sidespin.testing.conformance URL`, sidespin as the
  client under test of the official MCP conformance suite (`tests/mcp/test_conformance.py`).

Nothing in the product imports from here.
"""
