// Wrong type: mxfp4.dequantize gets memrefs instead of tensors.
func.func @f(%v: memref<4x64xf4E2M1FN>, %s: memref<4x2xf8E8M0FNU>) {
  %d = mxfp4.dequantize %v scale %s axis = 1 : memref<4x64xf4E2M1FN>, memref<4x2xf8E8M0FNU> -> memref<4x64xf32>
  return
}
