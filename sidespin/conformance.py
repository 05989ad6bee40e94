"""`python -m sidespin.conformance URL`: sidespin as the client under test of the MCP conformance suite.

The name the suite's documentation uses; the client itself is `sidespin.testing.conformance`.
"""

import sys

from sidespin.testing.conformance import main

if __name__ == "__main__":
    sys.exit(main())
