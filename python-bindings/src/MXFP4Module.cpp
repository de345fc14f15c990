//===- MXFP4Module.cpp - the mxfp4 Python module --------------------------===//
//
// Part of the mxfp4 project, under the Apache License v2.0 with LLVM
// Exceptions. SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
//===----------------------------------------------------------------------===//
//
// pybind11 bindings over the C++ API: compile a module for the CPU and call
// its functions with NumPy arrays. Every llvm::Error becomes a Python
// exception that carries the located diagnostics.
//
//===----------------------------------------------------------------------===//

#include "Bindings.h"

#include "mxfp4/API/Compiler.h"
#include "mxfp4/API/CpuRunner.h"
#include "mxfp4/API/Gfx950.h"
#include "mxfp4/API/LayerStudy.h"
#include "mxfp4/Pipelines/Pipelines.h"

#include <pybind11/numpy.h>
#include <pybind11/pybind11.h>
#include <pybind11/stl.h>

#include <cstring>

namespace py = pybind11;
using namespace mlir::mxfp4;

namespace {

std::optional<DType> dtypeOf(const py::dtype &dtype) {
  if (dtype.is(py::dtype::of<float>()))
    return DType::Float32;
  if (dtype.is(py::dtype::of<double>()))
    return DType::Float64;
  if (dtype.is(py::dtype::of<int32_t>()))
    return DType::Int32;
  if (dtype.is(py::dtype::of<int64_t>()))
    return DType::Int64;
  if (dtype.is(py::dtype::of<uint8_t>()))
    return DType::UInt8;
  if (dtype.is(py::dtype::of<uint16_t>()))
    return DType::UInt16;
  return std::nullopt;
}

py::dtype numpyDtype(DType dtype) {
  switch (dtype) {
  case DType::Float32:
    return py::dtype::of<float>();
  case DType::Float64:
    return py::dtype::of<double>();
  case DType::Int32:
    return py::dtype::of<int32_t>();
  case DType::Int64:
    return py::dtype::of<int64_t>();
  case DType::UInt8:
    return py::dtype::of<uint8_t>();
  case DType::UInt16:
    return py::dtype::of<uint16_t>();
  }
  throw Mxfp4Error("unknown dtype");
}

/// Copies a C-contiguous NumPy array into a HostArray.
HostArray toHostArray(const py::array &array, size_t index) {
  std::optional<DType> dtype = dtypeOf(array.dtype());
  if (!dtype)
    throw Mxfp4Error("argument #" + std::to_string(index) + ": dtype " +
                     py::str(array.dtype()).cast<std::string>() +
                     " is not one of float32, float64, int32, int64, uint8, "
                     "uint16");
  py::array contiguous = py::array::ensure(array, py::array::c_style);
  HostArray host;
  host.dtype = *dtype;
  for (py::ssize_t d = 0; d < contiguous.ndim(); ++d)
    host.shape.push_back(contiguous.shape(d));
  host.bytes.resize(contiguous.nbytes());
  std::memcpy(host.bytes.data(), contiguous.data(), contiguous.nbytes());
  return host;
}

py::array toNumpy(HostArray &&host) {
  std::vector<py::ssize_t> shape(host.shape.begin(), host.shape.end());
  py::array result(numpyDtype(host.dtype), shape);
  std::memcpy(result.mutable_data(), host.bytes.data(), host.bytes.size());
  return result;
}

CpuMatmulKernel parseKernel(const std::string &name) {
  if (name == "auto")
    return CpuMatmulKernel::automatic;
  if (name == "reference")
    return CpuMatmulKernel::reference;
  if (name == "avx512-bf16")
    return CpuMatmulKernel::avx512BF16;
  throw Mxfp4Error("matmul kernel '" + name +
                   "' is not one of auto, reference, avx512-bf16");
}

/// Python view of a compiled module.
struct PyCpuModule {
  std::unique_ptr<CpuModule> module;

  py::list call(const std::string &name, py::args args) {
    llvm::SmallVector<CallArgument> arguments;
    for (auto [i, arg] : llvm::enumerate(args)) {
      // Messages already say "argument #i"; the label names the Python type.
      std::string label = py::str(py::type::of(arg).attr("__name__"));
      if (py::isinstance<py::bool_>(arg))
        throw Mxfp4Error("argument #" + std::to_string(i) +
                         ": booleans are not supported");
      if (py::isinstance<py::int_>(arg))
        arguments.push_back({Scalar{false, arg.cast<int64_t>(), 0.0}, label});
      else if (py::isinstance<py::float_>(arg))
        arguments.push_back({Scalar{true, 0, arg.cast<double>()}, label});
      else
        arguments.push_back(
            {toHostArray(py::array::ensure(arg), i), label});
    }
    llvm::SmallVector<HostArray> results =
        unwrap(module->invoke(name, arguments));
    py::list out;
    for (HostArray &result : results)
      out.append(toNumpy(std::move(result)));
    return out;
  }

  py::list functions() const {
    py::list out;
    for (const FunctionSignature &function : module->getFunctions()) {
      py::list arguments, results;
      for (const ValueType &type : function.arguments)
        arguments.append(type.text);
      for (const ValueType &type : function.results)
        results.append(type.text);
      out.append(py::make_tuple(function.name, arguments, results));
    }
    return out;
  }
};

} // namespace

PYBIND11_MODULE(_mxfp4, m) {
  m.doc() = "mxfp4: MXFP4 training compiler (native part)";
  py::register_exception<Mxfp4Error>(m, "Mxfp4Error", PyExc_ValueError);
  bindTraining(m);

  m.def(
      "parse",
      [](const std::string &source, const std::string &name, bool generic) {
        return unwrap(parseAndPrint(source, name, generic));
      },
      py::arg("source"), py::arg("name") = "<source>",
      py::arg("generic") = false,
      "Parses and verifies MLIR text; returns it printed (raises Mxfp4Error "
      "with the located diagnostics otherwise)");
  m.def(
      "run_pipeline",
      [](const std::string &source, const std::string &pipeline,
         const std::string &name) {
        return unwrap(runPipeline(source, pipeline, name));
      },
      py::arg("source"), py::arg("pipeline"), py::arg("name") = "<source>",
      "Runs a textual pass pipeline (any pass or pipeline of mxfp4-opt) and "
      "returns the printed result");
  m.def(
      "compile_gfx950",
      [](const std::string &source, const std::string &name, int64_t tile,
         const std::string &recipe) {
        Gfx950CompileOptions options;
        options.tile = tile;
        options.recipe = recipe;
        Gfx950Artifact artifact;
        {
          py::gil_scoped_release release;
          artifact = unwrap(compileForGfx950(source, name, options));
        }
        py::dict result;
        result["code_object"] = py::bytes(
            reinterpret_cast<const char *>(artifact.codeObject.data()),
            artifact.codeObject.size());
        result["assembly"] = artifact.assembly;
        result["kernel_ir"] = artifact.kernelIR;
        result["report"] = unwrap(formatGfx950ReportJSON(artifact));
        result["compile_seconds"] = artifact.compileSeconds;
        return result;
      },
      py::arg("source"), py::arg("name") = "<source>", py::arg("tile") = 0,
      py::arg("recipe") = "",
      "Compiles a module for gfx950 (MI350X/MI355X): returns a dict with the "
      "code object (HSACO bytes), the assembly, the kernel IR (host plan and "
      "kernels) and the kernel report as JSON text");
  m.def("host_has_avx512_bf16", &hostHasAvx512BF16,
        "True if this CPU has AVX512_BF16 (the fast scaled_matmul kernel)");

  py::class_<PyCpuModule>(m, "CpuModule",
                          "A module of mxfp4 and upstream ops compiled for "
                          "the host CPU")
      .def(py::init([](const std::string &source, const std::string &name,
                       const std::string &matmul, const std::string &recipe) {
             CpuCompileOptions options{parseKernel(matmul), recipe};
             return PyCpuModule{
                 unwrap(CpuModule::fromSource(source, name, options))};
           }),
           py::arg("source"), py::arg("name") = "<source>",
           py::arg("matmul") = "auto", py::arg("recipe") = "")
      .def_property_readonly("functions", &PyCpuModule::functions,
                             "(name, argument types, result types) of every "
                             "public function")
      .def_property_readonly(
          "uses_avx512_bf16",
          [](const PyCpuModule &self) { return self.module->usesAvx512BF16(); })
      .def("call", &PyCpuModule::call, py::arg("name"),
           "Calls a function with NumPy arrays (tensors) and Python numbers "
           "(scalars); returns the results as NumPy arrays");

  m.def(
      "layer_study",
      [](int64_t tokens, int64_t inFeatures, int64_t outFeatures,
         int64_t outliers, float outlierScale, uint64_t seed) {
        LayerStudyOptions options;
        options.tokens = tokens;
        options.inFeatures = inFeatures;
        options.outFeatures = outFeatures;
        options.outliers = outliers;
        options.outlierScale = outlierScale;
        options.seed = seed;
        LayerStudyReport report = unwrap(runLayerStudy(options));
        py::list rows;
        for (const LayerStudyRow &row : report.rows)
          rows.append(py::make_tuple(row.gemm, row.recipe, row.relativeError));
        return rows;
      },
      py::arg("tokens") = 2048, py::arg("in_features") = 1024,
      py::arg("out_features") = 512, py::arg("outliers") = 8,
      py::arg("outlier_scale") = 50.0f, py::arg("seed") = 1,
      "Relative error of a linear layer's three GEMMs per recipe: a list of "
      "(gemm, recipe, error)");
}
