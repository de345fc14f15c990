#!/bin/sh
# A linker that fails with a message, for sm90a-host-library.test.
echo "ld.lld: error: no room on the device" >&2
exit 1
