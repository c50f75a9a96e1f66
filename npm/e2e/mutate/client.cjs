// The sample client of hostemu mutate's end-to-end test (npm/npm_test.go) and of
// docs/mutate.md: projectCount swallows every error, createDeployment throws it.

/** How many projects the token sees; 0 on any error, which no caller can tell from none. */
async function projectCount(base, token) {
  try {
    const res = await fetch(`${base}/v1/projects`, { headers: { authorization: `Bearer ${token}` } });
    if (!res.ok) return 0;
    return (await res.json()).data.length;
  } catch {
    return 0;
  }
}

/** Creates a deployment of project and resolves with its id; rejects with the error. */
async function createDeployment(base, token, project) {
  const res = await fetch(`${base}/v1/deployments`, {
    method: "POST",
    headers: { authorization: `Bearer ${token}`, "content-type": "application/json" },
    body: JSON.stringify({ project_id: project, files: {} }),
  });
  if (res.status !== 201) throw new Error(`create deployment: ${res.status} ${await res.text()}`);
  return (await res.json()).id;
}

exports.projectCount = projectCount;
exports.createDeployment = createDeployment;
