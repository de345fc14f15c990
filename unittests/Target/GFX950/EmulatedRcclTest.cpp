//===- EmulatedRcclTest.cpp - libmxfp4-emulated-rccl.so across processes --===//
//
// Part of the mxfp4 project, under the Apache License v2.0 with LLVM
// Exceptions. SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
//===----------------------------------------------------------------------===//
//
// The RCCL stand-in as a data-parallel launcher uses it: the parent makes a
// unique id, forks one child per rank, and each child dlopens the library,
// joins the communicator and runs collectives. Children write their results
// to files and _exit(); the parent checks them against a rank-order
// reference, byte for byte, and that /dev/shm keeps no segment. Also the
// failure paths: a rank that never joins or dies, mismatched collectives,
// injected failures, argument errors.
//
//===----------------------------------------------------------------------===//

#include <gtest/gtest.h>

#include <dlfcn.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <functional>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

namespace {

// NCCL's ABI, as the runtimes declare it.
struct ncclUniqueId {
  char internal[128];
};
using ncclComm_t = void *;
enum : int { Success = 0, SystemError = 2, InvalidArgument = 4 };
enum : int { InvalidUsage = 5, RemoteError = 6 };
enum : int { Int8, Uint8, Int32, Uint32, Int64, Uint64, F16, F32, F64, BF16 };
enum : int { Sum, Prod, Max, Min, Avg };

struct Rccl {
  int (*ncclGetVersion)(int *);
  int (*ncclGetUniqueId)(ncclUniqueId *);
  int (*ncclCommInitRank)(ncclComm_t *, int, ncclUniqueId, int);
  int (*ncclCommDestroy)(ncclComm_t);
  int (*ncclCommAbort)(ncclComm_t);
  int (*ncclCommCount)(ncclComm_t, int *);
  int (*ncclCommUserRank)(ncclComm_t, int *);
  const char *(*ncclGetErrorString)(int);
  const char *(*ncclGetLastError)(ncclComm_t);
  int (*ncclAllReduce)(const void *, void *, size_t, int, int, ncclComm_t,
                       void *);
  int (*ncclBroadcast)(const void *, void *, size_t, int, int, ncclComm_t,
                       void *);
  int (*ncclReduceScatter)(const void *, void *, size_t, int, int, ncclComm_t,
                           void *);
  int (*ncclAllGather)(const void *, void *, size_t, int, ncclComm_t, void *);
  int (*ncclGroupStart)();
  int (*ncclGroupEnd)();

  /// Loads every entry point; on failure returns the reason.
  std::string load() {
    void *handle = dlopen(MXFP4_EMULATED_RCCL_LIBRARY, RTLD_NOW | RTLD_LOCAL);
    if (!handle)
      return dlerror();
#define LOAD(name)                                                             \
  name = reinterpret_cast<decltype(name)>(dlsym(handle, #name));               \
  if (!name)                                                                   \
    return "no symbol " #name;
    LOAD(ncclGetVersion);
    LOAD(ncclGetUniqueId);
    LOAD(ncclCommInitRank);
    LOAD(ncclCommDestroy);
    LOAD(ncclCommAbort);
    LOAD(ncclCommCount);
    LOAD(ncclCommUserRank);
    LOAD(ncclGetErrorString);
    LOAD(ncclGetLastError);
    LOAD(ncclAllReduce);
    LOAD(ncclBroadcast);
    LOAD(ncclReduceScatter);
    LOAD(ncclAllGather);
    LOAD(ncclGroupStart);
    LOAD(ncclGroupEnd);
#undef LOAD
    return "";
  }
};

/// bfloat16 bits; the reference rounds float to nearest-even by hand.
struct Bf16 {
  uint16_t bits;
};
float toFloat(Bf16 v) {
  uint32_t bits = uint32_t(v.bits) << 16;
  float f;
  std::memcpy(&f, &bits, 4);
  return f;
}
Bf16 toBf16(float f) {
  uint32_t bits;
  std::memcpy(&bits, &f, 4);
  return Bf16{uint16_t((bits + 0x7fff + ((bits >> 16) & 1)) >> 16)};
}

/// The element type's NCCL id, accumulator and conversions.
template <typename T> struct Traits {
  using Acc = T;
  static Acc load(T v) { return v; }
  static T store(Acc v) { return v; }
};
template <> struct Traits<Bf16> {
  using Acc = float;
  static float load(Bf16 v) { return toFloat(v); }
  static Bf16 store(float v) { return toBf16(v); }
};
template <> struct Traits<_Float16> {
  using Acc = float;
  static float load(_Float16 v) { return float(v); }
  static _Float16 store(float v) { return _Float16(v); }
};
template <typename T> int typeId();
template <> int typeId<float>() { return F32; }
template <> int typeId<Bf16>() { return BF16; }
template <> int typeId<int64_t>() { return Int64; }
template <> int typeId<_Float16>() { return F16; }

/// Rank `rank`'s deterministic input; floats whose sums round, so the
/// reduction order shows.
template <typename T>
std::vector<T> input(int rank, size_t count, int salt = 0) {
  std::vector<T> v(count);
  for (size_t i = 0; i < count; ++i) {
    int64_t k =
        int64_t((i * 37 + size_t(rank) * 101 + size_t(salt) * 7) % 1999);
    float f = float(k - 999) / 7.0f + float(rank) * 0.3f;
    if constexpr (std::is_same_v<T, float>)
      v[i] = f;
    else if constexpr (std::is_same_v<T, Bf16>)
      v[i] = toBf16(f * 1.01f);
    else if constexpr (std::is_same_v<T, _Float16>)
      v[i] = _Float16(float(k % 64 - 32) * 0.25f + float(rank));
    else
      v[i] = (k - 999) * 1000000007ll + rank;
  }
  return v;
}

/// The rank-order reduction of `parts[r][offset + i]`, as the library must
/// compute it.
template <typename T>
std::vector<T> reference(int op, const std::vector<std::vector<T>> &parts,
                         size_t offset, size_t count) {
  using Acc = typename Traits<T>::Acc;
  std::vector<T> out(count);
  int n = int(parts.size());
  for (size_t i = 0; i < count; ++i) {
    Acc acc = Traits<T>::load(parts[0][offset + i]);
    for (int r = 1; r < n; ++r) {
      Acc b = Traits<T>::load(parts[r][offset + i]);
      acc = op == Prod  ? acc * b
            : op == Max ? (b > acc ? b : acc)
            : op == Min ? (b < acc ? b : acc)
                        : acc + b;
    }
    out[i] = Traits<T>::store(op == Avg ? acc / Acc(n) : acc);
  }
  return out;
}

template <typename T> std::string bytesOf(const std::vector<T> &v) {
  return std::string(reinterpret_cast<const char *>(v.data()),
                     v.size() * sizeof(T));
}

/// FNV-1a, so that a large result travels as 8 bytes.
std::string hashOf(const std::string &bytes) {
  uint64_t h = 14695981039346656037ull;
  for (unsigned char c : bytes)
    h = (h ^ c) * 1099511628211ull;
  return std::string(reinterpret_cast<const char *>(&h), 8);
}

/// One rank's side: its library, communicator and results.
struct Child {
  int rank, nranks;
  ncclUniqueId id;
  Rccl api;
  ncclComm_t comm = nullptr;
  std::string out, err;

  int init() { return api.ncclCommInitRank(&comm, nranks, id, rank); }
  /// Records a failed call's code and message; returns whether it passed.
  bool ok(int result, const char *what) {
    if (result == Success)
      return true;
    err += std::string(what) + " -> " + std::to_string(result) + ": " +
           api.ncclGetLastError(comm) + "\n";
    return false;
  }
  /// Appends `result` and the last error message, each on one line.
  void record(int result) {
    out += std::to_string(result) + "\n" + api.ncclGetLastError(comm) + "\n";
  }
};

#define CHILD_OK(c, call)                                                      \
  if (!(c).ok((call), #call))                                                  \
    return 1;

struct RankRun {
  int status = -1; ///< exit status, or -signal
  std::string out, err;
};

std::string readFile(const std::string &path) {
  std::ifstream in(path, std::ios::binary);
  std::stringstream text;
  text << in.rdbuf();
  return text.str();
}

class EmulatedRcclTest : public ::testing::Test {
protected:
  void SetUp() override {
    std::string error = api.load();
    ASSERT_EQ(error, "");
    ASSERT_EQ(api.ncclGetUniqueId(&id), Success);
  }
  /// The segment the id names, in /dev/shm.
  std::string segmentPath() { return "/dev/shm" + std::string(id.internal); }

  /// Forks `nranks` children that run `body` and _exit with its status;
  /// kills them after 120 s. Then checks that no segment is left over.
  std::vector<RankRun> runRanks(int nranks,
                                const std::function<int(Child &)> &body) {
    char dir[] = "/tmp/mxfp4-rccl-test-XXXXXX";
    EXPECT_NE(mkdtemp(dir), nullptr);
    std::vector<pid_t> pids;
    for (int rank = 0; rank < nranks; ++rank) {
      pid_t pid = fork();
      if (pid == 0) {
        Child child{rank, nranks, id, Rccl(), nullptr, "", ""};
        int status = 1;
        std::string error = child.api.load();
        if (error.empty())
          status = body(child);
        else
          child.err = error;
        std::string base = std::string(dir) + "/" + std::to_string(rank);
        std::ofstream(base + ".out", std::ios::binary) << child.out;
        std::ofstream(base + ".err", std::ios::binary) << child.err;
        _exit(status);
      }
      pids.push_back(pid);
    }
    std::vector<RankRun> runs(nranks);
    auto deadline =
        std::chrono::steady_clock::now() + std::chrono::seconds(120);
    for (int left = nranks; left > 0;) {
      for (int rank = 0; rank < nranks; ++rank) {
        int status;
        if (pids[rank] <= 0 || waitpid(pids[rank], &status, WNOHANG) <= 0)
          continue;
        runs[rank].status =
            WIFEXITED(status) ? WEXITSTATUS(status) : -WTERMSIG(status);
        pids[rank] = 0;
        --left;
      }
      if (left && std::chrono::steady_clock::now() > deadline) {
        ADD_FAILURE() << "ranks still running after 120 s; killed";
        for (pid_t pid : pids)
          if (pid > 0 && kill(pid, SIGKILL) == 0)
            waitpid(pid, nullptr, 0);
        break;
      }
      std::this_thread::sleep_for(std::chrono::milliseconds(5));
    }
    for (int rank = 0; rank < nranks; ++rank) {
      std::string base = std::string(dir) + "/" + std::to_string(rank);
      runs[rank].out = readFile(base + ".out");
      runs[rank].err = readFile(base + ".err");
      unlink((base + ".out").c_str());
      unlink((base + ".err").c_str());
    }
    rmdir(dir);
    EXPECT_NE(access(segmentPath().c_str(), F_OK), 0)
        << segmentPath() << " was left behind";
    return runs;
  }

  Rccl api;
  ncclUniqueId id;
};

/// Reads what a child wrote, in order.
struct Reader {
  const std::string &bytes;
  size_t at = 0;
  template <typename T> std::vector<T> take(size_t count) {
    std::vector<T> v(count);
    EXPECT_LE(at + count * sizeof(T), bytes.size());
    if (at + count * sizeof(T) <= bytes.size())
      std::memcpy(v.data(), bytes.data() + at, count * sizeof(T));
    at += count * sizeof(T);
    return v;
  }
  std::string takeBytes(size_t count) {
    std::string text = bytes.substr(std::min(at, bytes.size()), count);
    at += count;
    return text;
  }
};

template <typename T>
std::vector<std::vector<T>> inputs(int nranks, size_t count, int salt = 0) {
  std::vector<std::vector<T>> parts;
  for (int r = 0; r < nranks; ++r)
    parts.push_back(input<T>(r, count, salt));
  return parts;
}

constexpr size_t kSmall = 1000;
/// 12 MB of float32: two chunks of the 8 MiB staging slot.
constexpr size_t kLarge = 3000000;

/// All-reduce of `count` elements of T with `op`, out of place or in place.
template <typename T>
int allReduce(Child &c, int op, size_t count, bool inPlace, bool hash,
              int salt = 0) {
  std::vector<T> send = input<T>(c.rank, count, salt), recv(count);
  T *to = inPlace ? send.data() : recv.data();
  CHILD_OK(c, c.api.ncclAllReduce(send.data(), to, count, typeId<T>(), op,
                                  c.comm, nullptr));
  std::string bytes = bytesOf(inPlace ? send : recv);
  c.out += hash ? hashOf(bytes) : bytes;
  return 0;
}

TEST_F(EmulatedRcclTest, AllReduce) {
  for (int nranks : {2, 3}) {
    SCOPED_TRACE("nranks " + std::to_string(nranks));
    ASSERT_EQ(api.ncclGetUniqueId(&id), Success);
    std::vector<RankRun> runs = runRanks(nranks, [](Child &c) {
      CHILD_OK(c, c.init());
      int count = 0, rank = -1;
      CHILD_OK(c, c.api.ncclCommCount(c.comm, &count));
      CHILD_OK(c, c.api.ncclCommUserRank(c.comm, &rank));
      if (count != c.nranks || rank != c.rank)
        return 2;
      for (int op : {Sum, Avg, Max, Min}) {
        if (allReduce<float>(c, op, kSmall, false, false) ||
            allReduce<Bf16>(c, op, kSmall, false, false) ||
            allReduce<int64_t>(c, op, kSmall, false, false))
          return 1;
      }
      if (allReduce<_Float16>(c, Sum, kSmall, false, false) ||
          allReduce<_Float16>(c, Avg, kSmall, true, false) ||
          allReduce<float>(c, Sum, kSmall, true, false, 1) ||
          allReduce<Bf16>(c, Avg, kSmall, true, false, 1) ||
          allReduce<float>(c, Sum, kLarge, false, true, 2) ||
          allReduce<int64_t>(c, Sum, kLarge / 2, true, true, 3))
        return 1;
      CHILD_OK(c, c.api.ncclCommDestroy(c.comm));
      return 0;
    });
    for (int r = 0; r < nranks; ++r) {
      ASSERT_EQ(runs[r].status, 0) << "rank " << r << ": " << runs[r].err;
      EXPECT_EQ(runs[r].out, runs[0].out) << "rank " << r << " differs";
    }
    Reader in{runs[0].out};
    for (int op : {Sum, Avg, Max, Min}) {
      SCOPED_TRACE("op " + std::to_string(op));
      EXPECT_EQ(
          bytesOf(in.take<float>(kSmall)),
          bytesOf(reference(op, inputs<float>(nranks, kSmall), 0, kSmall)));
      EXPECT_EQ(
          bytesOf(in.take<Bf16>(kSmall)),
          bytesOf(reference(op, inputs<Bf16>(nranks, kSmall), 0, kSmall)));
      EXPECT_EQ(
          bytesOf(in.take<int64_t>(kSmall)),
          bytesOf(reference(op, inputs<int64_t>(nranks, kSmall), 0, kSmall)));
    }
    EXPECT_EQ(
        bytesOf(in.take<_Float16>(kSmall)),
        bytesOf(reference(Sum, inputs<_Float16>(nranks, kSmall), 0, kSmall)));
    EXPECT_EQ(
        bytesOf(in.take<_Float16>(kSmall)),
        bytesOf(reference(Avg, inputs<_Float16>(nranks, kSmall), 0, kSmall)));
    EXPECT_EQ(
        bytesOf(in.take<float>(kSmall)),
        bytesOf(reference(Sum, inputs<float>(nranks, kSmall, 1), 0, kSmall)));
    EXPECT_EQ(
        bytesOf(in.take<Bf16>(kSmall)),
        bytesOf(reference(Avg, inputs<Bf16>(nranks, kSmall, 1), 0, kSmall)));
    EXPECT_EQ(in.takeBytes(8),
              hashOf(bytesOf(reference(Sum, inputs<float>(nranks, kLarge, 2), 0,
                                       kLarge))));
    EXPECT_EQ(
        in.takeBytes(8),
        hashOf(bytesOf(reference(Sum, inputs<int64_t>(nranks, kLarge / 2, 3), 0,
                                 kLarge / 2))));
    EXPECT_EQ(in.at, runs[0].out.size());
  }
}

TEST_F(EmulatedRcclTest, BroadcastReduceScatterAllGather) {
  for (int nranks : {2, 3}) {
    SCOPED_TRACE("nranks " + std::to_string(nranks));
    ASSERT_EQ(api.ncclGetUniqueId(&id), Success);
    // Large enough that reduce-scatter (8 MiB / nranks per chunk) and
    // all-gather (8 MiB per chunk) take two chunks.
    const size_t largeScatter = 1100000, largeGather = 2200000;
    std::vector<RankRun> runs = runRanks(nranks, [&](Child &c) {
      CHILD_OK(c, c.init());
      int n = c.nranks, last = n - 1;
      // Broadcast from the last rank, out of place; then in place from 0.
      std::vector<float> send = input<float>(c.rank, kSmall), recv(kSmall);
      CHILD_OK(c, c.api.ncclBroadcast(send.data(), recv.data(), kSmall, F32,
                                      last, c.comm, nullptr));
      c.out += bytesOf(recv);
      std::vector<Bf16> both = input<Bf16>(c.rank, kSmall);
      CHILD_OK(c, c.api.ncclBroadcast(both.data(), both.data(), kSmall, BF16, 0,
                                      c.comm, nullptr));
      c.out += bytesOf(both);
      // Reduce-scatter: out of place, in place (recv = send + rank *
      // recvcount, as NCCL defines it), and large.
      std::vector<float> rsSend = input<float>(c.rank, n * kSmall),
                         rsRecv(kSmall);
      CHILD_OK(c, c.api.ncclReduceScatter(rsSend.data(), rsRecv.data(), kSmall,
                                          F32, Sum, c.comm, nullptr));
      c.out += bytesOf(rsRecv);
      std::vector<int64_t> rsBoth = input<int64_t>(c.rank, n * kSmall);
      int64_t *part = rsBoth.data() + c.rank * kSmall;
      CHILD_OK(c, c.api.ncclReduceScatter(rsBoth.data(), part, kSmall, Int64,
                                          Max, c.comm, nullptr));
      c.out += bytesOf(std::vector<int64_t>(part, part + kSmall));
      std::vector<float> bigSend = input<float>(c.rank, n * largeScatter, 4),
                         bigRecv(largeScatter);
      CHILD_OK(c, c.api.ncclReduceScatter(bigSend.data(), bigRecv.data(),
                                          largeScatter, F32, Sum, c.comm,
                                          nullptr));
      c.out += hashOf(bytesOf(bigRecv));
      // All-gather: out of place, in place (send = recv + rank * sendcount),
      // and large.
      std::vector<int64_t> agSend = input<int64_t>(c.rank, kSmall),
                           agRecv(n * kSmall);
      CHILD_OK(c, c.api.ncclAllGather(agSend.data(), agRecv.data(), kSmall,
                                      Int64, c.comm, nullptr));
      c.out += bytesOf(agRecv);
      std::vector<float> agBoth(n * kSmall, -1.0f);
      std::vector<float> own = input<float>(c.rank, kSmall);
      std::copy(own.begin(), own.end(), agBoth.begin() + c.rank * kSmall);
      CHILD_OK(c, c.api.ncclAllGather(agBoth.data() + c.rank * kSmall,
                                      agBoth.data(), kSmall, F32, c.comm,
                                      nullptr));
      c.out += bytesOf(agBoth);
      std::vector<float> bigOwn = input<float>(c.rank, largeGather, 5),
                         bigAll(n * largeGather);
      CHILD_OK(c, c.api.ncclAllGather(bigOwn.data(), bigAll.data(), largeGather,
                                      F32, c.comm, nullptr));
      c.out += hashOf(bytesOf(bigAll));
      CHILD_OK(c, c.api.ncclCommDestroy(c.comm));
      return 0;
    });
    auto concat = [](const auto &parts) {
      std::string bytes;
      for (const auto &part : parts)
        bytes += bytesOf(part);
      return bytes;
    };
    for (int r = 0; r < nranks; ++r) {
      SCOPED_TRACE("rank " + std::to_string(r));
      ASSERT_EQ(runs[r].status, 0) << runs[r].err;
      Reader in{runs[r].out};
      EXPECT_EQ(bytesOf(in.take<float>(kSmall)),
                bytesOf(input<float>(nranks - 1, kSmall)));
      EXPECT_EQ(bytesOf(in.take<Bf16>(kSmall)),
                bytesOf(input<Bf16>(0, kSmall)));
      EXPECT_EQ(bytesOf(in.take<float>(kSmall)),
                bytesOf(reference(Sum, inputs<float>(nranks, nranks * kSmall),
                                  r * kSmall, kSmall)));
      EXPECT_EQ(bytesOf(in.take<int64_t>(kSmall)),
                bytesOf(reference(Max, inputs<int64_t>(nranks, nranks * kSmall),
                                  r * kSmall, kSmall)));
      EXPECT_EQ(in.takeBytes(8),
                hashOf(bytesOf(reference(
                    Sum, inputs<float>(nranks, nranks * largeScatter, 4),
                    r * largeScatter, largeScatter))));
      EXPECT_EQ(bytesOf(in.take<int64_t>(nranks * kSmall)),
                concat(inputs<int64_t>(nranks, kSmall)));
      EXPECT_EQ(bytesOf(in.take<float>(nranks * kSmall)),
                concat(inputs<float>(nranks, kSmall)));
      EXPECT_EQ(in.takeBytes(8),
                hashOf(concat(inputs<float>(nranks, largeGather, 5))));
      EXPECT_EQ(in.at, runs[r].out.size());
    }
  }
}

TEST_F(EmulatedRcclTest, MismatchedCollectivesFailOnEveryRank) {
  std::vector<RankRun> runs = runRanks(2, [](Child &c) {
    CHILD_OK(c, c.init());
    float data[8] = {1, 2, 3, 4, 5, 6, 7, 8};
    if (c.rank == 0)
      c.record(c.api.ncclAllReduce(data, data, 8, F32, Sum, c.comm, nullptr));
    else
      c.record(c.api.ncclBroadcast(data, data, 8, F32, 0, c.comm, nullptr));
    // The ranks stay in step: the next matching call works.
    CHILD_OK(c, c.api.ncclAllReduce(data, data, 8, F32, Max, c.comm, nullptr));
    CHILD_OK(c, c.api.ncclCommDestroy(c.comm));
    return 0;
  });
  for (const RankRun &run : runs) {
    ASSERT_EQ(run.status, 0) << run.err;
    EXPECT_EQ(run.out, "5\nmismatched collectives: rank 0 called all-reduce #1 "
                       "(count 8, float32, sum) but rank 1 called broadcast "
                       "#1 (count 8, float32, root 0)\n");
  }
}

TEST_F(EmulatedRcclTest, RankThatNeverJoinsTimesOut) {
  std::vector<RankRun> runs = runRanks(2, [](Child &c) {
    if (c.rank == 1)
      return 0; // exits without joining
    setenv("MXFP4_EMULATED_RCCL_TIMEOUT_S", "2", 1);
    auto start = std::chrono::steady_clock::now();
    c.record(c.init());
    double seconds =
        std::chrono::duration<double>(std::chrono::steady_clock::now() - start)
            .count();
    return seconds > 1.5 && seconds < 10 ? 0 : 3;
  });
  ASSERT_EQ(runs[0].status, 0) << runs[0].err;
  EXPECT_EQ(runs[0].out, "6\nncclCommInitRank: rank 1 of 2 did not join the "
                         "communicator within 2 s\n");
}

TEST_F(EmulatedRcclTest, RankThatDiesMidRunFailsItsPeers) {
  std::vector<RankRun> runs = runRanks(3, [](Child &c) {
    setenv("MXFP4_EMULATED_RCCL_TIMEOUT_S", "2", 1);
    CHILD_OK(c, c.init());
    float data[4] = {1, 2, 3, 4};
    CHILD_OK(c, c.api.ncclAllReduce(data, data, 4, F32, Sum, c.comm, nullptr));
    if (c.rank == 2)
      _exit(0); // dies before the second all-reduce
    c.record(c.api.ncclAllReduce(data, data, 4, F32, Sum, c.comm, nullptr));
    // The communicator stays failed.
    c.record(c.api.ncclAllReduce(data, data, 4, F32, Sum, c.comm, nullptr));
    CHILD_OK(c, c.api.ncclCommAbort(c.comm));
    return 0;
  });
  for (int r = 0; r < 2; ++r) {
    ASSERT_EQ(runs[r].status, 0) << runs[r].err;
    std::istringstream lines(runs[r].out);
    std::string code, message, code2, message2;
    std::getline(lines, code);
    std::getline(lines, message);
    std::getline(lines, code2);
    std::getline(lines, message2);
    EXPECT_EQ(code, "6");
    // The pid check or the timeout, whichever comes first; or the first
    // rank to notice gave up for both.
    bool exited = message.find("rank 2 of 3 (pid ") == 0 &&
                  message.find(") exited before it could reach all-reduce "
                               "#2") != std::string::npos;
    bool late = message == "rank 2 of 3 did not reach all-reduce #2 within 2 s";
    bool gaveUp =
        message.find(" gave up on the communicator") != std::string::npos;
    EXPECT_TRUE(exited || late || gaveUp) << message;
    EXPECT_EQ(code2, "6");
    EXPECT_EQ(message2.find("ncclAllReduce: the communicator is unusable after "
                            "an earlier failure: "),
              0u)
        << message2;
  }
}

TEST_F(EmulatedRcclTest, InjectedFailure) {
  std::vector<RankRun> runs = runRanks(2, [](Child &c) {
    setenv("MXFP4_EMULATED_RCCL_TIMEOUT_S", "2", 1);
    setenv("MXFP4_EMULATED_RCCL_FAIL", "1:2", 1);
    CHILD_OK(c, c.init());
    int64_t data[4] = {1, 2, 3, 4};
    CHILD_OK(c,
             c.api.ncclAllReduce(data, data, 4, Int64, Sum, c.comm, nullptr));
    c.record(c.api.ncclBroadcast(data, data, 4, Int64, 0, c.comm, nullptr));
    if (c.rank == 1) // its peer must give up by itself
      std::this_thread::sleep_for(std::chrono::seconds(4));
    CHILD_OK(c, c.api.ncclCommDestroy(c.comm));
    return data[0] == 2 ? 0 : 4;
  });
  ASSERT_EQ(runs[0].status, 0) << runs[0].err;
  ASSERT_EQ(runs[1].status, 0) << runs[1].err;
  EXPECT_EQ(runs[1].out, "2\nncclBroadcast: injected failure "
                         "(MXFP4_EMULATED_RCCL_FAIL) at collective #2\n");
  EXPECT_EQ(runs[0].out,
            "6\nrank 1 of 2 did not reach broadcast #2 within 2 s\n");
}

TEST_F(EmulatedRcclTest, OneRankArgumentsAndErrors) {
  int version = 0;
  ASSERT_EQ(api.ncclGetVersion(&version), Success);
  EXPECT_EQ(version, 22000);
  EXPECT_STREQ(api.ncclGetErrorString(Success), "no error");
  EXPECT_STREQ(api.ncclGetErrorString(RemoteError),
               "remote process exited or there was a network error");
  EXPECT_STREQ(api.ncclGetErrorString(99), "unknown result code");
  auto message = [&] { return std::string(api.ncclGetLastError(nullptr)); };

  ncclComm_t comm = nullptr;
  EXPECT_EQ(api.ncclCommInitRank(&comm, 0, id, 0), InvalidArgument);
  EXPECT_EQ(message(),
            "ncclCommInitRank: 0 ranks (the stand-in takes 1 to 64)");
  EXPECT_EQ(api.ncclCommInitRank(&comm, 2, id, 2), InvalidArgument);
  EXPECT_EQ(message(), "ncclCommInitRank: rank 2 is not a rank of 2");
  EXPECT_EQ(api.ncclCommInitRank(nullptr, 1, id, 0), InvalidArgument);
  ncclUniqueId bogus;
  std::memset(&bogus, 'x', sizeof(bogus));
  EXPECT_EQ(api.ncclCommInitRank(&comm, 1, bogus, 0), InvalidArgument);
  EXPECT_EQ(message(),
            "ncclCommInitRank: the id does not come from ncclGetUniqueId");

  // One rank: a collective is a copy, and nothing waits.
  ASSERT_EQ(api.ncclCommInitRank(&comm, 1, id, 0), Success) << message();
  EXPECT_NE(access(segmentPath().c_str(), F_OK), 0);
  std::vector<float> send = input<float>(0, 100), recv(100);
  ASSERT_EQ(api.ncclGroupStart(), Success);
  ASSERT_EQ(api.ncclGroupStart(), Success);
  ASSERT_EQ(
      api.ncclAllReduce(send.data(), recv.data(), 100, F32, Avg, comm, nullptr),
      Success);
  ASSERT_EQ(api.ncclGroupEnd(), Success);
  ASSERT_EQ(api.ncclGroupEnd(), Success);
  EXPECT_EQ(recv, send);
  EXPECT_EQ(api.ncclGroupEnd(), InvalidUsage);
  EXPECT_EQ(message(), "ncclGroupEnd: no ncclGroupStart to end");

  EXPECT_EQ(
      api.ncclAllReduce(send.data(), recv.data(), 100, 42, Sum, comm, nullptr),
      InvalidArgument);
  EXPECT_EQ(message(), "ncclAllReduce: unknown datatype 42");
  EXPECT_EQ(api.ncclReduceScatter(send.data(), recv.data(), 10, F32, 9, comm,
                                  nullptr),
            InvalidArgument);
  EXPECT_EQ(message(), "ncclReduceScatter: unknown reduction op 9");
  EXPECT_EQ(
      api.ncclBroadcast(send.data(), recv.data(), 100, F32, 1, comm, nullptr),
      InvalidArgument);
  EXPECT_EQ(message(), "ncclBroadcast: root 1 is not a rank of 1");
  EXPECT_EQ(api.ncclAllGather(nullptr, recv.data(), 100, F32, comm, nullptr),
            InvalidArgument);
  EXPECT_EQ(message(), "ncclAllGather: null buffer");
  EXPECT_EQ(api.ncclAllGather(nullptr, nullptr, 0, F32, comm, nullptr),
            Success);
  EXPECT_EQ(api.ncclAllReduce(send.data(), recv.data(), 1, F32, Sum, nullptr,
                              nullptr),
            InvalidArgument);
  EXPECT_EQ(message(), "ncclAllReduce: not a live communicator");
  EXPECT_EQ(api.ncclCommDestroy(comm), Success);
  EXPECT_EQ(api.ncclCommDestroy(nullptr), InvalidArgument);
}

} // namespace
