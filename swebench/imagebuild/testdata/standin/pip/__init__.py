"""Stand-in for pip (swebox tests, offline): installs nothing from an index."""
