#include <pmix.h>

#include <atomic>
#include <cstdlib>
#include <string>

#include "base/error.h"
#include "src/core/bootstrap/launch_sources.h"

namespace dc {

namespace {

[[noreturn]] void fail_pmix(const char* what, pmix_status_t rc) {
  fail(dcSystemError, std::string(what) + " failed: " + PMIx_Error_string(rc));
}

struct PmixSession {
  pmix_proc_t me;
  PmixSession() {
    if (pmix_status_t rc = PMIx_Init(&me, nullptr, 0); rc != PMIX_SUCCESS) fail_pmix("PMIx_Init", rc);
  }
  ~PmixSession() { PMIx_Finalize(nullptr, 0); }

  pmix_proc_t proc(pmix_rank_t rank) const {
    pmix_proc_t p;
    PMIX_LOAD_PROCID(&p, me.nspace, rank);
    return p;
  }
};

int job_size(const PmixSession& pmix) {
  pmix_proc_t job = pmix.proc(PMIX_RANK_WILDCARD);
  pmix_value_t* value = nullptr;
  if (pmix_status_t rc = PMIx_Get(&job, PMIX_JOB_SIZE, nullptr, 0, &value); rc != PMIX_SUCCESS)
    fail_pmix("PMIx_Get(PMIX_JOB_SIZE)", rc);
  int size = value->type == PMIX_UINT32 ? static_cast<int>(value->data.uint32) : -1;
  PMIX_VALUE_RELEASE(value);
  if (size < 1) fail(dcSystemError, "PMIx reported no usable job size");
  return size;
}

void publish(const std::string& key, const std::string& hex) {
  pmix_value_t value;
  PMIx_Value_load(&value, hex.c_str(), PMIX_STRING);
  pmix_status_t rc = PMIx_Put(PMIX_GLOBAL, key.c_str(), &value);
  PMIX_VALUE_DESTRUCT(&value);
  if (rc != PMIX_SUCCESS) fail_pmix("PMIx_Put", rc);
  if ((rc = PMIx_Commit()) != PMIX_SUCCESS) fail_pmix("PMIx_Commit", rc);
}

void fence_all(const PmixSession& pmix, int timeout_ms) {
  pmix_proc_t job = pmix.proc(PMIX_RANK_WILDCARD);
  bool collect = true;
  int seconds = (timeout_ms + 999) / 1000;
  pmix_info_t info[2];
  PMIx_Info_load(&info[0], PMIX_COLLECT_DATA, &collect, PMIX_BOOL);
  PMIx_Info_load(&info[1], PMIX_TIMEOUT, &seconds, PMIX_INT);
  pmix_status_t rc = PMIx_Fence(&job, 1, info, 2);
  PMIX_INFO_DESTRUCT(&info[0]);
  PMIX_INFO_DESTRUCT(&info[1]);
  if (rc != PMIX_SUCCESS) fail_pmix("PMIx_Fence", rc);
}

std::string fetch(const PmixSession& pmix, const std::string& key) {
  pmix_proc_t rank0 = pmix.proc(0);
  pmix_value_t* value = nullptr;
  if (pmix_status_t rc = PMIx_Get(&rank0, key.c_str(), nullptr, 0, &value); rc != PMIX_SUCCESS)
    fail_pmix(("PMIx_Get(" + key + ")").c_str(), rc);
  std::string hex = value->type == PMIX_STRING && value->data.string ? value->data.string : "";
  PMIX_VALUE_RELEASE(value);
  return hex;
}

}  // namespace

std::optional<LaunchInfo> launch_info_from_pmix(int timeout_ms) {
  const char* rank = std::getenv("PMIX_RANK");
  const char* nspace = std::getenv("PMIX_NAMESPACE");
  if (!(rank && *rank) && !(nspace && *nspace)) return std::nullopt;
  // Every rank calls this once per communicator, so the n-th call of each rank meets the others'
  // n-th.
  static std::atomic<int> calls{0};
  const std::string key = "deepcomm.uid." + std::to_string(calls++);

  PmixSession pmix;
  LaunchInfo info;
  info.nranks = job_size(pmix);
  info.rank = static_cast<int>(pmix.me.rank);
  info.source = "pmix";
  if (info.rank == 0) {
    make_unique_id(&info.id);
    publish(key, unique_id_to_hex(info.id));
  }
  fence_all(pmix, timeout_ms);
  if (info.rank != 0) {
    try {
      info.id = unique_id_from_hex(fetch(pmix, key));
    } catch (const Error& e) {
      fail(dcRemoteError, std::string("PMIx key ") + key + " of rank 0 is no unique id: " + e.what());
    }
  }
  return info;
}

}  // namespace dc
