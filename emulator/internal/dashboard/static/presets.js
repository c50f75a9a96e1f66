// The dashboard's fault presets: a button each. The array is JSON (a Go test posts each
// preset to POST /_emulator/faults), each item {id, label, title, fault} and, when the
// preset chooses its own requests, match (then the form's path, method and service are
// not used).
export const presets = [
  {"id": "503-once", "label": "503 once", "title": "Answer the next matching request 503 service_unavailable.",
   "fault": {"status": 503, "times": 1}},
  {"id": "retryable-503", "label": "503 a client can retry", "title": "The documented 503 service_unavailable with Retry-After, once: a retrying client honours it.",
   "fault": {"error": "service_unavailable", "times": 1}},
  {"id": "slow", "label": "Slow (2 s)", "title": "Delay every matching request 2 s.",
   "fault": {"delay": "2s"}},
  {"id": "drop", "label": "Drop", "title": "Close the connection of the next matching request without an answer.",
   "fault": {"drop": true, "times": 1}},
  {"id": "rate-limit", "label": "Rate limit", "title": "Answer 429 rate_limited as if the caller's limit were used up.",
   "fault": {"rate_limit": true}},
  {"id": "timeout", "label": "Timeout", "title": "Hold the next matching request until its client gives up.",
   "fault": {"timeout": true, "times": 1}},
  {"id": "reset", "label": "Reset the connection", "title": "Reset the connection before any byte of the answer, once.",
   "fault": {"break": "reset", "times": 1}},
  {"id": "empty", "label": "Empty answer", "title": "Send the status line and headers, then close with no body, once.",
   "fault": {"break": "empty", "times": 1}},
  {"id": "truncate", "label": "Truncate the body", "title": "Declare the real Content-Length, close after half the body, once.",
   "fault": {"break": "truncate", "times": 1}},
  {"id": "malformed", "label": "Malformed JSON", "title": "Answer 200 with a body that is not JSON, once.",
   "fault": {"break": "malformed", "times": 1}},
  {"id": "wrong-type", "label": "HTML, not JSON", "title": "Send the real body as text/html, once.",
   "fault": {"break": "wrong_type", "times": 1}},
  {"id": "slow-body", "label": "Slow body (1 KB/s)", "title": "Send the real answer at 1,024 bytes a second, once.",
   "fault": {"break": "slow", "bytes_per_second": 1024, "times": 1}},
  {"id": "fail-production-creates", "label": "Fail only production creates", "title": "Answer 503 to every createDeployment whose body says target production (the form's fields are not used).",
   "match": {"operation": "createDeployment", "body": {"target": "production"}},
   "fault": {"error": "service_unavailable"}},
  {"id": "503-reset-success", "label": "503, then reset, then success", "title": "The next three matching requests: a retryable 503, a reset connection, then the real answer.",
   "fault": {"then": [{"error": "service_unavailable"}, {"break": "reset"}, {"pass": true}]}}
];
