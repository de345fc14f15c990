//===- EmulatedRccl.cpp - an RCCL stand-in over POSIX shared memory -------===//
//
// Part of the mxfp4 project, under the Apache License v2.0 with LLVM
// Exceptions. SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
//===----------------------------------------------------------------------===//
//
/// \file
/// libmxfp4-emulated-rccl.so: a test stand-in for the NCCL/RCCL C API (RCCL
/// shares NCCL's ABI), so that the runtimes' multi-process data-parallel
/// paths run in CI without GPUs, beside libmxfp4-emulated-hip.so, whose
/// device memory is host memory. Production uses the real libnccl.so.2 or
/// librccl.so.
///
/// One process per rank. ncclGetUniqueId names a POSIX shared-memory segment
/// (pid, time, /dev/urandom bytes) that ncclCommInitRank maps: a slot per
/// rank (a monotonic barrier phase, its pid, its collective's descriptor),
/// then kSlotBytes of staging per rank that buffers pass through in chunks.
/// The last rank to attach unlinks it, so a normal run leaves nothing in
/// /dev/shm; a run killed inside ncclCommInitRank may leave a few-KiB
/// /dev/shm/mxfp4-rccl-* segment (harmless: ids are never reused).
///
/// Collectives finish within the call (the stream is ignored; the emulated
/// HIP runtime is synchronous too). Every rank reduces all ranks' data in
/// rank order, so results are deterministic and bit-identical on all ranks:
/// float16/bfloat16 reduce in float and round once to nearest-even, integers
/// wrap, ncclAvg divides the sum by N (integer division for integers).
/// ncclGroupStart/End only count nesting: each op still runs at its call,
/// which works while every rank issues the same sequence.
///
/// A wait gives up with ncclRemoteError after $MXFP4_EMULATED_RCCL_TIMEOUT_S
/// seconds (default 60), or as soon as a peer's pid is gone (ranks share a
/// pid namespace), never hanging.
/// $MXFP4_EMULATED_RCCL_FAIL=RANK:N fails rank RANK's N-th collective call
/// with ncclSystemError, touching no shared state, to test error paths.
//
//===----------------------------------------------------------------------===//

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <mutex>
#include <sstream>
#include <string>
#include <thread>
#include <type_traits>

#include <fcntl.h>
#include <signal.h>
#include <sys/mman.h>
#include <unistd.h>

// NCCL's ABI (nccl.h 2.x), declared here: no NCCL header is installed.
// clang-format off
extern "C" {
typedef struct { char internal[128]; } ncclUniqueId;
typedef struct ncclComm *ncclComm_t;
typedef enum { ncclSuccess = 0, ncclUnhandledCudaError = 1,
  ncclSystemError = 2, ncclInternalError = 3, ncclInvalidArgument = 4,
  ncclInvalidUsage = 5, ncclRemoteError = 6, ncclInProgress = 7
} ncclResult_t;
typedef enum { ncclInt8 = 0, ncclUint8 = 1, ncclInt32 = 2, ncclUint32 = 3,
  ncclInt64 = 4, ncclUint64 = 5, ncclFloat16 = 6, ncclFloat32 = 7,
  ncclFloat64 = 8, ncclBfloat16 = 9 } ncclDataType_t;
typedef enum { ncclSum = 0, ncclProd = 1, ncclMax = 2, ncclMin = 3,
  ncclAvg = 4 } ncclRedOp_t;
}
// clang-format on

namespace {

/// Staging bytes per rank: the most of a buffer one pair of barriers moves.
constexpr size_t kSlotBytes = 8u << 20;
/// Header slots; 64 ranks already stage 512 MiB of /dev/shm.
constexpr int kMaxRanks = 64;
constexpr uint32_t kCommMagic = 0x52434c4c;
constexpr const char *kIdPrefix = "/mxfp4-rccl-";

enum Kind : int32_t { AllReduce, Broadcast, ReduceScatter, AllGather };
const char *const kKindNames[] = {"all-reduce", "broadcast", "reduce-scatter",
                                  "all-gather"};
const char *const kTypeNames[] = {"int8",    "uint8",   "int32",   "uint32",
                                  "int64",   "uint64",  "float16", "float32",
                                  "float64", "bfloat16"};
const size_t kTypeSizes[] = {1, 1, 4, 4, 8, 8, 2, 4, 8, 2};
const char *const kOpNames[] = {"sum", "prod", "max", "min", "avg"};

/// What a rank is about to run; all ranks' must be equal.
struct Desc {
  uint64_t seq, count;
  int32_t kind, type, op, root;
};

struct alignas(64) Slot {
  /// The last barrier this rank reached; only grows.
  std::atomic<uint64_t> phase;
  std::atomic<int64_t> pid;
  /// Indexed by barrier parity: a rank rewrites one only after every rank
  /// passed the barrier that follows its reading.
  Desc desc[2];
};

/// The start of the segment. A new segment is zero-filled, which is every
/// atomic's initial value; they are lock-free, hence address-free, so they
/// work across processes.
struct Header {
  std::atomic<int32_t> nranks, attached;
  /// 1 + the rank that gave up on the communicator, or 0.
  std::atomic<int32_t> abortedBy;
  Slot slots[kMaxRanks];
};
static_assert(std::atomic<uint64_t>::is_always_lock_free &&
                  std::atomic<int32_t>::is_always_lock_free,
              "shared-memory atomics must be lock-free");
constexpr size_t kStagingOffset = (sizeof(Header) + 4095) & ~size_t(4095);

std::mutex errorMutex;
std::string lastError;
thread_local int groupDepth = 0;

/// Concatenates its arguments as text.
template <typename... Ts> std::string cat(const Ts &...parts) {
  std::ostringstream out;
  (out << ... << parts);
  return out.str();
}

/// An enum argument's value as passed; a caller may pass one the enum does
/// not name, which C++ may not load as the enum.
template <typename E> int valueOf(const E &e) {
  int value;
  static_assert(sizeof(E) == sizeof(int), "NCCL's enums are int-sized");
  std::memcpy(&value, &e, sizeof(int));
  return value;
}

ncclResult_t fail(ncclResult_t code, const std::string &message) {
  std::lock_guard<std::mutex> lock(errorMutex);
  lastError = message;
  return code;
}

double timeoutSeconds() {
  if (const char *env = std::getenv("MXFP4_EMULATED_RCCL_TIMEOUT_S")) {
    char *end = nullptr;
    double value = std::strtod(env, &end);
    if (end != env && *end == '\0' && value > 0)
      return value;
  }
  return 60;
}

/// How an element type loads into its accumulator and stores back. The
/// 16-bit floats accumulate in float and round once, to nearest-even
/// (_Float16 converts through libgcc's __truncsfhf2).
template <typename T, typename A = T> struct Element {
  using Acc = A;
  static Acc load(const uint8_t *p) {
    T value;
    std::memcpy(&value, p, sizeof(T));
    return Acc(value);
  }
  static void store(uint8_t *p, Acc value) {
    T narrow = T(value);
    std::memcpy(p, &narrow, sizeof(T));
  }
};
/// bfloat16 by hand: the host's libgcc may lack __truncsfbf2.
struct BFloat16 {
  uint16_t high;
  BFloat16() = default;
  BFloat16(float value) {
    uint32_t bits;
    std::memcpy(&bits, &value, 4);
    bits = (bits & 0x7fffffff) > 0x7f800000
               ? bits | 0x400000 // quiet NaN
               : bits + 0x7fff + ((bits >> 16) & 1);
    high = uint16_t(bits >> 16);
  }
  operator float() const {
    uint32_t bits = uint32_t(high) << 16;
    float value;
    std::memcpy(&value, &bits, 4);
    return value;
  }
};

/// Integers compute unsigned so that they wrap, as on a GPU, instead of
/// overflowing into undefined behavior.
template <typename T, bool = std::is_integral_v<T>> struct Wrapping {
  using type = T;
};
template <typename T> struct Wrapping<T, true> {
  using type = std::make_unsigned_t<T>;
};

/// out[i] = in[0][i] op in[1][i] op ... op in[n-1][i], in that order.
template <typename Ty>
void reduceAs(int op, const uint8_t *const *in, int n, size_t count,
              size_t size, uint8_t *out) {
  using Acc = typename Ty::Acc;
  using W = typename Wrapping<Acc>::type;
  for (size_t i = 0, at = 0; i < count; ++i, at += size) {
    Acc acc = Ty::load(in[0] + at);
    for (int r = 1; r < n; ++r) {
      Acc b = Ty::load(in[r] + at);
      acc = op == ncclProd  ? Acc(W(acc) * W(b))
            : op == ncclMax ? (b > acc ? b : acc)
            : op == ncclMin ? (b < acc ? b : acc)
                            : Acc(W(acc) + W(b));
    }
    Ty::store(out + at, op == ncclAvg ? Acc(acc / Acc(n)) : acc);
  }
}

void reduce(int type, int op, const uint8_t *const *in, int n, size_t count,
            uint8_t *out) {
  using Fn =
      void (*)(int, const uint8_t *const *, int, size_t, size_t, uint8_t *);
  static const Fn table[] = {
      reduceAs<Element<int8_t>>,          reduceAs<Element<uint8_t>>,
      reduceAs<Element<int32_t>>,         reduceAs<Element<uint32_t>>,
      reduceAs<Element<int64_t>>,         reduceAs<Element<uint64_t>>,
      reduceAs<Element<_Float16, float>>, reduceAs<Element<float>>,
      reduceAs<Element<double>>,          reduceAs<Element<BFloat16, float>>};
  table[type](op, in, n, count, kTypeSizes[type], out);
}

std::string describe(const Desc &d) {
  std::string text = cat(kKindNames[d.kind], " #", d.seq, " (count ", d.count,
                         ", ", kTypeNames[d.type]);
  if (d.kind == Broadcast)
    return cat(text, ", root ", d.root, ")");
  return d.kind == AllGather ? text + ")"
                             : cat(text, ", ", kOpNames[d.op], ")");
}

} // namespace

struct ncclComm {
  uint32_t magic = kCommMagic;
  int rank = 0, nranks = 0;
  Header *header = nullptr;
  size_t bytes = 0;
  double timeout = 60;
  /// This rank's last barrier target, and its collective calls so far.
  uint64_t phase = 0, calls = 0;
  /// Set by a failure after which the ranks are out of step.
  ncclResult_t broken = ncclSuccess;
  std::string brokenMessage;

  uint8_t *staging(int r) {
    return reinterpret_cast<uint8_t *>(header) + kStagingOffset +
           size_t(r) * kSlotBytes;
  }
  ncclResult_t breakWith(ncclResult_t code, const std::string &message) {
    broken = code;
    brokenMessage = message;
    return fail(code, message);
  }
  /// Gives up on the communicator, so peers waiting on this rank fail fast.
  ncclResult_t abandon(ncclResult_t code, const std::string &message) {
    int32_t none = 0;
    header->abortedBy.compare_exchange_strong(none, rank + 1);
    return breakWith(code, message);
  }

  /// Waits until every rank reaches the next barrier; `what` ("reach
  /// all-reduce #3") completes the message about a rank that does not.
  ncclResult_t barrier(const std::string &what) {
    uint64_t target = ++phase;
    header->slots[rank].phase.store(target, std::memory_order_release);
    auto behind = [&](int r) {
      return header->slots[r].phase.load(std::memory_order_acquire) < target;
    };
    auto start = std::chrono::steady_clock::now(), lastPidCheck = start;
    for (unsigned spin = 0;; ++spin) {
      int r = 0;
      while (r < nranks && !behind(r))
        ++r;
      if (r == nranks)
        return ncclSuccess;
      if (int32_t by = header->abortedBy.load(std::memory_order_acquire))
        return breakWith(ncclRemoteError,
                         cat("rank ", by - 1, " of ", nranks,
                             " gave up on the communicator (see its error) "
                             "while rank ",
                             rank, " waited for all ranks to ", what));
      if (spin < 64) { // a peer on another core is usually about to arrive
        std::this_thread::yield();
        continue;
      }
      auto now = std::chrono::steady_clock::now();
      if (now - lastPidCheck > std::chrono::milliseconds(100)) {
        lastPidCheck = now;
        for (int p = 0; p < nranks; ++p) {
          int64_t pid = header->slots[p].pid.load(std::memory_order_acquire);
          if (pid > 0 && ::kill(pid_t(pid), 0) != 0 && errno == ESRCH &&
              behind(p))
            return abandon(ncclRemoteError,
                           cat("rank ", p, " of ", nranks, " (pid ", pid,
                               ") exited before it could ", what));
        }
      }
      if (std::chrono::duration<double>(now - start).count() > timeout) {
        std::string missing;
        int count = 0;
        for (int p = 0; p < nranks; ++p)
          if (behind(p))
            missing += cat(count++ ? ", " : "", p);
        return abandon(ncclRemoteError,
                       cat(count > 1 ? "ranks " : "rank ", missing, " of ",
                           nranks, " did not ", what, " within ", timeout,
                           " s"));
      }
      ::usleep(spin < 4096 ? 20 : 200);
    }
  }

  /// Runs one collective of `count` units, `perChunk` at a time: stage(at,
  /// length) fills this rank's staging slot; a barrier; consume(at, length)
  /// reads the slots; a barrier, so no slot is refilled while being read.
  /// The descriptors travel with the first barrier.
  template <typename Stage, typename Consume>
  ncclResult_t run(const Desc &mine, size_t perChunk, Stage stage,
                   Consume consume) {
    std::string what = cat("reach ", kKindNames[mine.kind], " #", mine.seq);
    size_t chunks = std::max<size_t>(1, (mine.count + perChunk - 1) / perChunk);
    for (size_t k = 0, at = 0; k < chunks; ++k, at += perChunk) {
      size_t length = std::min<size_t>(perChunk, mine.count - at);
      if (length) // a count of 0 may come with null buffers
        stage(at, length);
      if (k == 0)
        header->slots[rank].desc[(phase + 1) & 1] = mine;
      if (ncclResult_t result = barrier(what))
        return result;
      // Every rank compares all with rank 0, so all fail alike and stay in
      // step for the next call.
      for (int r = 1; k == 0 && r < nranks; ++r) {
        const Desc &first = header->slots[0].desc[phase & 1],
                   &other = header->slots[r].desc[phase & 1];
        if (std::memcmp(&first, &other, sizeof(Desc)) != 0)
          return fail(ncclInvalidUsage,
                      cat("mismatched collectives: rank 0 called ",
                          describe(first), " but rank ", r, " called ",
                          describe(other)));
      }
      if (length)
        consume(at, length);
      if (ncclResult_t result = barrier(what))
        return result;
    }
    return ncclSuccess;
  }
};

namespace {

bool isComm(const ncclComm *comm) { return comm && comm->magic == kCommMagic; }

ncclResult_t collective(const char *api, Kind kind, const void *sendBuffer,
                        void *recvBuffer, size_t count, int type, int op,
                        int root, ncclComm *c) {
  if (!isComm(c))
    return fail(ncclInvalidArgument, cat(api, ": not a live communicator"));
  // Calls that fail here count too, so a peer that went on sees a mismatch.
  bool reduces = kind == AllReduce || kind == ReduceScatter;
  Desc mine{++c->calls, count, kind, type, reduces ? op : -1, -1};
  if (kind == Broadcast)
    mine.root = root;
  if (c->broken)
    return fail(c->broken, cat(api,
                               ": the communicator is unusable after an "
                               "earlier failure: ",
                               c->brokenMessage));
  if (type < ncclInt8 || type > ncclBfloat16)
    return fail(ncclInvalidArgument, cat(api, ": unknown datatype ", type));
  if (reduces && (op < ncclSum || op > ncclAvg))
    return fail(ncclInvalidArgument, cat(api, ": unknown reduction op ", op));
  if (kind == Broadcast && (root < 0 || root >= c->nranks))
    return fail(ncclInvalidArgument,
                cat(api, ": root ", root, " is not a rank of ", c->nranks));
  if (count && (!sendBuffer || !recvBuffer))
    return fail(ncclInvalidArgument, cat(api, ": null buffer"));
  size_t size = kTypeSizes[type], n = size_t(c->nranks);
  if (count > SIZE_MAX / size / n)
    return fail(ncclInvalidArgument, cat(api, ": count ", count, " overflows"));
  if (const char *env = std::getenv("MXFP4_EMULATED_RCCL_FAIL")) {
    long failRank = -1;
    unsigned long long failCall = 0;
    if (std::sscanf(env, "%ld:%llu", &failRank, &failCall) == 2 &&
        failRank == c->rank && failCall == c->calls)
      return c->breakWith(ncclSystemError, cat(api,
                                               ": injected failure (MXFP4_"
                                               "EMULATED_RCCL_FAIL) at "
                                               "collective #",
                                               c->calls));
  }

  auto *send = static_cast<const uint8_t *>(sendBuffer);
  auto *recv = static_cast<uint8_t *>(recvBuffer);
  uint8_t *mine8 = c->staging(c->rank);
  const uint8_t *slots[kMaxRanks];
  for (int r = 0; r < c->nranks; ++r)
    slots[r] = c->staging(r);
  // Staging copies each rank's input first, so in-place buffers (recv ==
  // send, or NCCL's in-place offsets for reduce-scatter and all-gather) work.
  auto stageOwn = [&](size_t at, size_t len) {
    if (kind != Broadcast || c->rank == root)
      std::memcpy(mine8, send + at * size, len * size);
  };
  switch (kind) {
  case AllReduce:
    return c->run(mine, kSlotBytes / size, stageOwn,
                  [&](size_t at, size_t len) {
                    reduce(type, op, slots, c->nranks, len, recv + at * size);
                  });
  case Broadcast:
    return c->run(mine, kSlotBytes / size, stageOwn,
                  [&](size_t at, size_t len) {
                    std::memcpy(recv + at * size, slots[root], len * size);
                  });
  case ReduceScatter: // count is recvcount; rank d's part stages at d * len
    return c->run(
        mine, kSlotBytes / size / n,
        [&](size_t at, size_t len) {
          for (size_t d = 0; d < n; ++d)
            std::memcpy(mine8 + d * len * size, send + (d * count + at) * size,
                        len * size);
        },
        [&](size_t at, size_t len) {
          const uint8_t *parts[kMaxRanks];
          for (size_t r = 0; r < n; ++r)
            parts[r] = slots[r] + c->rank * len * size;
          reduce(type, op, parts, c->nranks, len, recv + at * size);
        });
  default: // AllGather; count is sendcount
    return c->run(
        mine, kSlotBytes / size, stageOwn, [&](size_t at, size_t len) {
          for (size_t r = 0; r < n; ++r)
            std::memcpy(recv + (r * count + at) * size, slots[r], len * size);
        });
  }
}

} // namespace

extern "C" {

/// NCCL 2.20.0's number, though this stand-in has only the API above.
ncclResult_t ncclGetVersion(int *version) {
  if (!version)
    return fail(ncclInvalidArgument, "ncclGetVersion: null pointer");
  *version = 22000;
  return ncclSuccess;
}

ncclResult_t ncclGetUniqueId(ncclUniqueId *id) {
  if (!id)
    return fail(ncclInvalidArgument, "ncclGetUniqueId: null pointer");
  unsigned long long random[2] = {0, 0};
  int fd = ::open("/dev/urandom", O_RDONLY | O_CLOEXEC);
  bool ok = fd >= 0 && ::read(fd, random, sizeof(random)) == sizeof(random);
  int error = errno;
  if (fd >= 0)
    ::close(fd);
  if (!ok)
    return fail(ncclSystemError, cat("ncclGetUniqueId: cannot read "
                                     "/dev/urandom: ",
                                     std::strerror(error)));
  long long ns = std::chrono::system_clock::now().time_since_epoch().count();
  std::memset(id->internal, 0, sizeof(id->internal));
  std::snprintf(id->internal, sizeof(id->internal), "%s%ld-%llx-%016llx%016llx",
                kIdPrefix, long(::getpid()), ns, random[0], random[1]);
  return ncclSuccess;
}

ncclResult_t ncclCommInitRank(ncclComm_t *comm, int nranks, ncclUniqueId id,
                              int rank) {
  const char *api = "ncclCommInitRank: ";
  if (!comm)
    return fail(ncclInvalidArgument, cat(api, "null comm pointer"));
  *comm = nullptr;
  if (nranks < 1 || nranks > kMaxRanks)
    return fail(ncclInvalidArgument, cat(api, nranks,
                                         " ranks (the stand-in "
                                         "takes 1 to ",
                                         kMaxRanks, ")"));
  if (rank < 0 || rank >= nranks)
    return fail(ncclInvalidArgument,
                cat(api, "rank ", rank, " is not a rank of ", nranks));
  std::string name(id.internal, strnlen(id.internal, sizeof(id.internal)));
  if (name.size() == sizeof(id.internal) || name.rfind(kIdPrefix, 0) != 0)
    return fail(ncclInvalidArgument,
                cat(api, "the id does not come from ncclGetUniqueId"));
  // Every rank creates or opens the segment and reserves its header; the
  // staging is reserved once the rendezvous has unlinked the name, so a run
  // killed before then leaves only a few KiB in /dev/shm.
  size_t bytes = kStagingOffset + size_t(nranks) * kSlotBytes;
  int fd = ::shm_open(name.c_str(), O_RDWR | O_CREAT | O_CLOEXEC, 0600);
  if (fd < 0)
    return fail(ncclSystemError,
                cat(api, "shm_open(", name, "): ", std::strerror(errno)));
  // fallocate, not ftruncate: it never shrinks the segment under a peer,
  // and a full /dev/shm fails here rather than as a SIGBUS later.
  int error = ::posix_fallocate(fd, 0, off_t(kStagingOffset));
  void *map =
      error ? MAP_FAILED
            : ::mmap(nullptr, bytes, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
  if (!error && map == MAP_FAILED)
    error = errno;
  if (error) {
    ::close(fd);
    return fail(ncclSystemError, cat(api, "cannot map /dev/shm", name, ": ",
                                     std::strerror(error)));
  }
  auto *header = static_cast<Header *>(map);
  int32_t expected = 0;
  int64_t otherPid = 0;
  std::string misuse;
  if (!header->nranks.compare_exchange_strong(expected, nranks) &&
      expected != nranks)
    misuse = cat("rank ", rank, " was given ", nranks, " ranks but a peer ",
                 expected);
  else if (!header->slots[rank].pid.compare_exchange_strong(
               otherPid, int64_t(::getpid())))
    misuse = cat("rank ", rank, " joined twice (pids ", otherPid, " and ",
                 ::getpid(), ")");
  if (!misuse.empty()) {
    ::close(fd);
    ::munmap(map, bytes);
    return fail(ncclInvalidUsage, cat(api, misuse));
  }
  auto *c = new ncclComm();
  c->rank = rank;
  c->nranks = nranks;
  c->header = header;
  c->bytes = bytes;
  c->timeout = timeoutSeconds();
  // All ranks have it open now; nobody opens the name again.
  if (header->attached.fetch_add(1) + 1 == nranks)
    ::shm_unlink(name.c_str());
  ncclResult_t result = c->barrier("join the communicator");
  if (result == ncclSuccess) {
    error = ::posix_fallocate(fd, off_t(kStagingOffset + rank * kSlotBytes),
                              off_t(kSlotBytes));
    result = error
                 ? c->abandon(ncclSystemError,
                              cat("rank ", rank, " cannot reserve ", kSlotBytes,
                                  " bytes of /dev/shm: ", std::strerror(error)))
                 : c->barrier("reserve its staging memory");
  }
  ::close(fd);
  if (result != ncclSuccess) {
    ::shm_unlink(name.c_str()); // the id is spent
    std::string message = cat(api, c->brokenMessage);
    ::munmap(map, bytes);
    delete c;
    return fail(result, message);
  }
  *comm = c;
  return ncclSuccess;
}

ncclResult_t ncclCommDestroy(ncclComm_t comm) {
  if (!isComm(comm))
    return fail(ncclInvalidArgument, "ncclCommDestroy: not a communicator");
  // Peers read this rank's staging slot only before the barrier that ended
  // the last collective, so unmapping needs no handshake; and the segment
  // was unlinked when the last rank attached, before any init returned.
  ::munmap(comm->header, comm->bytes);
  comm->magic = 0;
  delete comm;
  return ncclSuccess;
}

ncclResult_t ncclCommAbort(ncclComm_t comm) {
  if (!isComm(comm))
    return fail(ncclInvalidArgument, "ncclCommAbort: not a communicator");
  int32_t none = 0; // peers still waiting on this rank fail fast
  comm->header->abortedBy.compare_exchange_strong(none, comm->rank + 1);
  return ncclCommDestroy(comm);
}

ncclResult_t ncclCommCount(const ncclComm_t comm, int *count) {
  if (!isComm(comm) || !count)
    return fail(ncclInvalidArgument, "ncclCommCount: bad arguments");
  *count = comm->nranks;
  return ncclSuccess;
}

ncclResult_t ncclCommUserRank(const ncclComm_t comm, int *rank) {
  if (!isComm(comm) || !rank)
    return fail(ncclInvalidArgument, "ncclCommUserRank: bad arguments");
  *rank = comm->rank;
  return ncclSuccess;
}

const char *ncclGetErrorString(ncclResult_t result) {
  static const char *const kStrings[] = {
      "no error",
      "unhandled cuda error",
      "unhandled system error (see ncclGetLastError)",
      "internal error",
      "invalid argument (see ncclGetLastError)",
      "invalid usage (see ncclGetLastError)",
      "remote process exited or there was a network error",
      "NCCL operation in progress"};
  unsigned index = unsigned(valueOf(result));
  return index < 8 ? kStrings[index] : "unknown result code";
}

/// The message of this process's last failure, whatever the communicator
/// (as in NCCL); valid until the next failure.
const char *ncclGetLastError(ncclComm_t) {
  std::lock_guard<std::mutex> lock(errorMutex);
  return lastError.c_str();
}

ncclResult_t ncclAllReduce(const void *send, void *recv, size_t count,
                           ncclDataType_t type, ncclRedOp_t op, ncclComm_t comm,
                           void *) {
  return collective("ncclAllReduce", AllReduce, send, recv, count,
                    valueOf(type), valueOf(op), 0, comm);
}

ncclResult_t ncclBroadcast(const void *send, void *recv, size_t count,
                           ncclDataType_t type, int root, ncclComm_t comm,
                           void *) {
  return collective("ncclBroadcast", Broadcast, send, recv, count,
                    valueOf(type), 0, root, comm);
}

ncclResult_t ncclReduceScatter(const void *send, void *recv, size_t recvcount,
                               ncclDataType_t type, ncclRedOp_t op,
                               ncclComm_t comm, void *) {
  return collective("ncclReduceScatter", ReduceScatter, send, recv, recvcount,
                    valueOf(type), valueOf(op), 0, comm);
}

ncclResult_t ncclAllGather(const void *send, void *recv, size_t sendcount,
                           ncclDataType_t type, ncclComm_t comm, void *) {
  return collective("ncclAllGather", AllGather, send, recv, sendcount,
                    valueOf(type), 0, 0, comm);
}

ncclResult_t ncclGroupStart() {
  ++groupDepth;
  return ncclSuccess;
}

ncclResult_t ncclGroupEnd() {
  if (groupDepth == 0)
    return fail(ncclInvalidUsage, "ncclGroupEnd: no ncclGroupStart to end");
  --groupDepth;
  return ncclSuccess;
}

} // extern "C"
