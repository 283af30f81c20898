// libpq, loaded on first use (dlopen), so a binary on the embedded SQLite store never maps it nor
// what it pulls in (OpenSSL, Kerberos): the same promise the network module keeps for HTTP
// (server/netmod). Only pg_connection.cpp calls through it.
#pragma once

#include <libpq-fe.h>

#include "common/result.h"

namespace imgmcp::session::postgres {

// The libpq functions imgmcp calls, resolved from the shared library.
struct LibPq {
  decltype(&::PQbackendPID) PQbackendPID;
  decltype(&::PQclear) PQclear;
  decltype(&::PQconnectdbParams) PQconnectdbParams;
  decltype(&::PQconninfoFree) PQconninfoFree;
  decltype(&::PQconninfoParse) PQconninfoParse;
  decltype(&::PQconsumeInput) PQconsumeInput;
  decltype(&::PQerrorMessage) PQerrorMessage;
  decltype(&::PQexec) PQexec;
  decltype(&::PQexecParams) PQexecParams;
  decltype(&::PQfinish) PQfinish;
  decltype(&::PQfreemem) PQfreemem;
  decltype(&::PQgetisnull) PQgetisnull;
  decltype(&::PQgetlength) PQgetlength;
  decltype(&::PQgetResult) PQgetResult;
  decltype(&::PQgetvalue) PQgetvalue;
  decltype(&::PQisBusy) PQisBusy;
  decltype(&::PQnotifies) PQnotifies;
  decltype(&::PQntuples) PQntuples;
  decltype(&::PQresultErrorField) PQresultErrorField;
  decltype(&::PQresultErrorMessage) PQresultErrorMessage;
  decltype(&::PQresultStatus) PQresultStatus;
  decltype(&::PQsendQueryParams) PQsendQueryParams;
  decltype(&::PQsetNoticeProcessor) PQsetNoticeProcessor;
  decltype(&::PQsocket) PQsocket;
  decltype(&::PQstatus) PQstatus;
  decltype(&::PQtransactionStatus) PQtransactionStatus;
};

// Loads libpq once (thread-safe); a missing library is a clear kFailedPrecondition error that
// names the package, every time it is asked for.
Result<const LibPq*> LoadLibPq();

}  // namespace imgmcp::session::postgres
