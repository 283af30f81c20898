#include "session/postgres/libpq_api.h"

#include <dlfcn.h>

#include <string>

#include "common/log.h"

namespace imgmcp::session::postgres {
namespace {

// libpq's soname has been libpq.so.5 since PostgreSQL 8.0.
constexpr char kLibrary[] = "libpq.so.5";

Error LoadError(const std::string& why) {
  return MakeError(ErrorCode::kFailedPrecondition,
                   std::string("the PostgreSQL store needs libpq (") + kLibrary +
                       "; Debian package libpq5): " + why);
}

Result<const LibPq*> Load() {
  // RTLD_NOW: a libpq without one of the functions fails here, naming it.
  void* handle = dlopen(kLibrary, RTLD_NOW | RTLD_LOCAL);
  if (handle == nullptr) {
    const char* why = dlerror();
    return LoadError(why != nullptr ? why : "could not be loaded");
  }
  static LibPq api;  // filled once, read-only afterwards; the handle stays open for good
  std::string missing;
  auto resolve = [&](auto& fn, const char* name) {
    fn = reinterpret_cast<std::remove_reference_t<decltype(fn)>>(dlsym(handle, name));
    if (fn == nullptr) missing += (missing.empty() ? "" : ", ") + std::string(name);
  };
#define IMGMCP_RESOLVE(name) resolve(api.name, #name)
  IMGMCP_RESOLVE(PQbackendPID);
  IMGMCP_RESOLVE(PQclear);
  IMGMCP_RESOLVE(PQconnectdbParams);
  IMGMCP_RESOLVE(PQconninfoFree);
  IMGMCP_RESOLVE(PQconninfoParse);
  IMGMCP_RESOLVE(PQconsumeInput);
  IMGMCP_RESOLVE(PQerrorMessage);
  IMGMCP_RESOLVE(PQexec);
  IMGMCP_RESOLVE(PQexecParams);
  IMGMCP_RESOLVE(PQfinish);
  IMGMCP_RESOLVE(PQfreemem);
  IMGMCP_RESOLVE(PQgetisnull);
  IMGMCP_RESOLVE(PQgetlength);
  IMGMCP_RESOLVE(PQgetResult);
  IMGMCP_RESOLVE(PQgetvalue);
  IMGMCP_RESOLVE(PQisBusy);
  IMGMCP_RESOLVE(PQnotifies);
  IMGMCP_RESOLVE(PQntuples);
  IMGMCP_RESOLVE(PQresultErrorField);
  IMGMCP_RESOLVE(PQresultErrorMessage);
  IMGMCP_RESOLVE(PQresultStatus);
  IMGMCP_RESOLVE(PQsendQueryParams);
  IMGMCP_RESOLVE(PQsetNoticeProcessor);
  IMGMCP_RESOLVE(PQsocket);
  IMGMCP_RESOLVE(PQstatus);
  IMGMCP_RESOLVE(PQtransactionStatus);
#undef IMGMCP_RESOLVE
  if (!missing.empty()) return LoadError("it has no " + missing);
  log::Debug("postgres", std::string("loaded ") + kLibrary);
  return &api;
}

}  // namespace

Result<const LibPq*> LoadLibPq() {
  static const Result<const LibPq*> loaded = Load();  // thread-safe, once
  return loaded;
}

}  // namespace imgmcp::session::postgres
