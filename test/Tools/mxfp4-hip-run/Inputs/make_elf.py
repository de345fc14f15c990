"""Writes the 64-byte ELF header of an AMDGPU code object for a processor.

    make_elf.py OUT MACH      (MACH: the e_flags processor, 0x4f gfx950,
                               0x4c gfx942)

The fake HIP library (unittests/Runtime/FakeHip.cpp) reads only the header:
it loads an image whose e_flags say gfx950 and refuses any other processor
with hipErrorNoBinaryForGpu, as ROCm does.
"""
import struct
import sys

EM_AMDGPU = 224
header = b"\x7fELF" + bytes([2, 1, 1, 0x40, 3]) + bytes(7)
header += struct.pack("<HHIQQQIHHHHHH", 3, EM_AMDGPU, 1, 0, 0, 0,
                      int(sys.argv[2], 0), 64, 56, 0, 64, 0, 0)
assert len(header) == 64
open(sys.argv[1], "wb").write(header)
