# What python/build.sh knows when it builds a wheel; it replaces this file in each one.
# These are the values of the source tree, which holds no binary.

#: The package's version (PEP 440), from hostemu's (see python/build.sh).
VERSION = "0+source"
#: Whether this wheel carries the hostemu binary in its scripts directory (a platform
#: wheel) or not (the py3-none-any fallback, and the source tree).
BUNDLED = False
