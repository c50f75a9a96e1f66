// The failing suites' one step (node.test.mjs, vitest.test.mjs, jest.test.cjs): a
// deployment made through the API, its id returned.
module.exports = async function deploy(emu) {
  const res = await fetch(`${emu.url}/v1/deployments`, {
    method: "POST",
    headers: { authorization: `Bearer ${emu.tokens.deploy}`, "content-type": "application/json" },
    body: JSON.stringify({ project_id: "prj_demo", files: {} }),
  });
  if (res.status !== 201) throw new Error(`POST /v1/deployments: ${res.status}`);
  return (await res.json()).id;
};
