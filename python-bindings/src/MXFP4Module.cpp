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

#include "mxfp4/API/Artifact.h"
#include "mxfp4/API/Compiler.h"
#include "mxfp4/API/CpuRunner.h"
#include "mxfp4/API/Gfx950.h"
#include "mxfp4/API/LayerStudy.h"
#include "mxfp4/API/Trainer.h"
#include "mxfp4/Pipelines/Pipelines.h"
#include "mxfp4/Runtime/Safetensors.h"

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
  m.def(
      "attention_composite",
      [](const std::string &kind, const std::vector<int64_t> &q,
         const std::vector<int64_t> &kv) {
        return unwrap(getAttentionCompositeSource(kind, q, kv));
      },
      py::arg("kind"), py::arg("q_shape"), py::arg("kv_shape"),
      "The MLIR text of the attention composite `kind` (causal_attention or "
      "causal_attention_backward) for q [B, S, H, D] and k, v [B, S, KVH, D]: "
      "one private func.func a frontend's module calls.");
  m.def(
      "add_train_step",
      [](const std::string &source, const py::dict &optimizer,
         const std::string &from, const py::object &noDecay,
         const std::vector<unsigned> &integerData, const std::string &name) {
        TrainStepOptions options;
        options.from = from;
        AdamWConfig &c = options.adamw;
        for (auto [key, value] : optimizer) {
          std::string k = py::cast<std::string>(key);
          if (k == "warmup_steps" || k == "total_steps") {
            (k == "warmup_steps" ? c.warmupSteps : c.totalSteps) =
                py::cast<int64_t>(value);
            continue;
          }
          double *field = k == "lr"             ? &c.lr
                          : k == "min_lr_ratio" ? &c.minLrRatio
                          : k == "beta1"        ? &c.beta1
                          : k == "beta2"        ? &c.beta2
                          : k == "eps"          ? &c.eps
                          : k == "weight_decay" ? &c.weightDecay
                          : k == "clip_norm"    ? &c.clipNorm
                                                : nullptr;
          if (!field)
            throw Mxfp4Error("optimizer: unknown key '" + k +
                             "' (lr, min_lr_ratio, warmup_steps, total_steps, "
                             "beta1, beta2, eps, weight_decay, clip_norm)");
          *field = py::cast<double>(value);
        }
        if (!noDecay.is_none()) {
          options.noDecay = py::cast<std::vector<std::string>>(noDecay);
          options.noDecayGiven = true;
        }
        options.integerData = integerData;
        return unwrap(addTrainStepToSource(source, options, name));
      },
      py::arg("source"), py::arg("optimizer") = py::dict(),
      py::arg("from_function") = "loss_and_grads",
      py::arg("no_decay") = py::none(),
      py::arg("integer_data") = std::vector<unsigned>(),
      py::arg("name") = "<source>",
      "Adds @train_step (AdamW with global-norm clipping, linear warm-up and "
      "cosine decay, in PyTorch 1.13's order) built from a loss-and-gradients "
      "function; `optimizer` overrides lr, min_lr_ratio, warmup_steps, "
      "total_steps, beta1, beta2, eps, weight_decay, clip_norm; `no_decay` "
      "names the parameters without weight decay (default: those of rank 1); "
      "`integer_data` the data arguments @train_step takes as int32");
  m.def(
      "compile_artifact",
      [](const std::string &source, const std::string &target,
         const std::string &outDir, const std::string &recipe,
         const std::string &gemmPrecision, const std::string &name) {
        ArtifactOrigin origin;
        origin.target = target;
        origin.recipe = recipe;
        origin.gemmPrecision = gemmPrecision;
        origin.program = name;
        py::gil_scoped_release release;
        if (llvm::Error error = compileArtifact(source, name, origin, outDir))
          unwrap(llvm::Expected<int>(std::move(error)));
      },
      py::arg("source"), py::arg("target"), py::arg("out_dir"),
      py::arg("recipe") = "", py::arg("gemm_precision") = "bf16",
      py::arg("name") = "<source>",
      "Compiles a module for a GPU (target 'sm_90a' or 'gfx950') into the "
      "folder its runtime runs from, as `mxfp4-run compile --out-dir` does");
  m.def(
      "write_training_run",
      [](const std::string &outDir, const std::vector<std::string> &names,
         const std::vector<py::array> &params, const py::array &batches,
         const py::object &evalBatches, int64_t evalEvery, uint64_t seed,
         const std::string &model) {
        TrainingRunManifest manifest;
        std::vector<HostArray> arrays;
        if (names.size() != params.size())
          throw Mxfp4Error(
              "write_training_run: " + std::to_string(names.size()) +
              " names for " + std::to_string(params.size()) + " parameters");
        for (size_t i = 0; i < params.size(); ++i) {
          arrays.push_back(toHostArray(
              py::array_t<float, py::array::c_style | py::array::forcecast>(
                  params[i]),
              i));
          TrainingRunParameter param;
          param.name = names[i];
          param.shape.assign(arrays.back().shape.begin(),
                             arrays.back().shape.end());
          manifest.params.push_back(std::move(param));
        }
        auto tokensOf = [](const py::array &a, int64_t &count,
                           const char *what) {
          if (a.ndim() != 3)
            throw Mxfp4Error(std::string("write_training_run: ") + what +
                             " must be [count, batch, window], got " +
                             std::to_string(a.ndim()) + " dimensions");
          if (!py::isinstance<py::array_t<int32_t>>(a) &&
              !py::isinstance<py::array_t<int64_t>>(a))
            throw Mxfp4Error(std::string("write_training_run: ") + what +
                             " must be an int32 or int64 array");
          auto ints =
              py::array_t<int64_t, py::array::c_style | py::array::forcecast>(
                  a);
          count = a.shape(0);
          std::vector<int32_t> out;
          for (py::ssize_t i = 0; i < ints.size(); ++i) {
            int64_t t = ints.data()[i];
            if (t < 0 || t > INT32_MAX)
              throw Mxfp4Error(std::string("write_training_run: ") + what +
                               " hold token id " + std::to_string(t) +
                               ", outside int32's non-negative range");
            out.push_back(static_cast<int32_t>(t));
          }
          return out;
        };
        std::vector<int32_t> train =
            tokensOf(batches, manifest.steps, "batches");
        manifest.batch = batches.shape(1);
        manifest.window = batches.shape(2);
        std::vector<int32_t> eval;
        if (!evalBatches.is_none()) {
          py::array e = py::array::ensure(evalBatches);
          eval = tokensOf(e, manifest.evalBatches, "eval_batches");
          if (e.shape(1) != manifest.batch || e.shape(2) != manifest.window)
            throw Mxfp4Error("write_training_run: eval_batches must have the "
                             "batches' batch and window");
        }
        manifest.evalEvery = evalEvery;
        manifest.tokenBytes = 4;
        manifest.seed = seed;
        manifest.model = model;
        if (llvm::Error error =
                writeTrainingRunFolder(outDir, manifest, arrays, train, eval))
          unwrap(llvm::Expected<int>(std::move(error)));
      },
      py::arg("out_dir"), py::arg("names"), py::arg("params"),
      py::arg("batches"), py::arg("eval_batches") = py::none(),
      py::arg("eval_every") = 0, py::arg("seed") = 0, py::arg("model") = "",
      "Writes the run folder a GPU runtime trains from (run.txt, "
      "param<i>.npy, batches.bin, eval.bin): the parameters in the compiled "
      "step's order and token batches [steps, batch, window]");
  m.def(
      "read_safetensors",
      [](const std::string &path) {
        std::vector<NamedArray> tensors = unwrap(readSafetensors(path));
        py::dict out;
        for (NamedArray &t : tensors)
          out[py::str(t.name)] = toNumpy(std::move(t.array));
        return out;
      },
      py::arg("path"),
      "The tensors of a .safetensors file (a checkpoint's model.safetensors), "
      "by name, as NumPy arrays");
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
