#!/bin/bash
# run_deploy_manifests.sh — deploy/kubernetes/: every file parses as YAML, every
# object has apiVersion, kind and metadata.name (namespaced ones in namespace
# infermon), kustomization.yaml lists every file, the objects refer to each other
# correctly (ServiceAccount, PVC, ConfigMap, Service selector and port), every
# flag the Deployment passes is one `infermon run` knows, and the ClusterRole
# grants exactly the (API group, resource, verb) set the code requests — the
# requests read from the sources (discovery's resource table, the monitor Lists
# and Secret reads, the in-cluster default's roles and its token-authorised
# Kueue scrape), nothing more, no wildcards.
. "$IM_SOURCE_DIR/tests/lib/common.sh"
"$IM_BINARY" run --help > "$IM_TMP/run-help.txt"
"$IM_BINARY" check config --in-cluster > "$IM_TMP/incluster.yml" 2>/dev/null || true
$PY - "$IM_SOURCE_DIR" "$IM_TMP" <<'PYEOF'
import glob, os, re, sys
import yaml
src, tmp = sys.argv[1], sys.argv[2]
d = os.path.join(src, "deploy/kubernetes")
def fail(m):
    print("FAIL: " + m); sys.exit(1)
objs, files = [], sorted(os.path.basename(f) for f in glob.glob(d + "/*.yaml"))
for f in files:
    for o in yaml.safe_load_all(open(os.path.join(d, f))):
        if o is None: continue
        # kustomization.yaml is kustomize's own file, not an object sent to the cluster.
        for k in ("apiVersion", "kind") + (() if o.get("kind") == "Kustomization" else ("metadata",)):
            if k not in o: fail("%s: an object without %s" % (f, k))
        if o["kind"] != "Kustomization" and not o["metadata"].get("name"):
            fail("%s: %s without metadata.name" % (f, o["kind"]))
        objs.append((f, o))
kinds = {o["kind"]: o for _, o in objs}
for k in ("Namespace", "ServiceAccount", "ClusterRole", "ClusterRoleBinding", "ConfigMap",
          "PersistentVolumeClaim", "Deployment", "Service", "Kustomization"):
    if k not in kinds: fail("no " + k)
cluster_scoped = {"Namespace", "ClusterRole", "ClusterRoleBinding", "Kustomization"}
for f, o in objs:
    if o["kind"] not in cluster_scoped and o["metadata"].get("namespace") != "infermon":
        fail("%s: %s not in namespace infermon" % (f, o["kind"]))
kz = kinds["Kustomization"]
if sorted(kz["resources"]) != sorted(x for x in files if x != "kustomization.yaml"):
    fail("kustomization.yaml does not list exactly the other files")
# References between the objects.
sa = kinds["ServiceAccount"]["metadata"]["name"]
crb = kinds["ClusterRoleBinding"]
if crb["roleRef"]["name"] != kinds["ClusterRole"]["metadata"]["name"]: fail("binding names another role")
if [(s["kind"], s["name"], s["namespace"]) for s in crb["subjects"]] != [("ServiceAccount", sa, "infermon")]:
    fail("binding subjects")
dep = kinds["Deployment"]["spec"]
pod = dep["template"]["spec"]
if pod["serviceAccountName"] != sa: fail("Deployment does not run as the ServiceAccount")
if dep["selector"]["matchLabels"].items() - dep["template"]["metadata"]["labels"].items():
    fail("Deployment selector does not match its pods")
vols = {v["name"]: v for v in pod["volumes"]}
if vols["data"]["persistentVolumeClaim"]["claimName"] != kinds["PersistentVolumeClaim"]["metadata"]["name"]:
    fail("data volume is not the PVC")
if vols["config"]["configMap"]["name"] != kinds["ConfigMap"]["metadata"]["name"]: fail("config volume")
c = pod["containers"][0]
if c["args"][0] != "run": fail("container does not run `infermon run`")
helptext = open(os.path.join(tmp, "run-help.txt")).read()
for a in c["args"][1:]:
    flag = a.split("=", 1)[0]
    if not re.search(r"(^|\s)" + re.escape(flag) + r"[=\s]", helptext): fail("unknown flag " + flag)
    if flag == "--storage.tsdb.path" and a.split("=", 1)[1] != [m["mountPath"] for m in c["volumeMounts"] if m["name"] == "data"][0]:
        fail("store path is not the PVC mount")
svc = kinds["Service"]["spec"]
if svc["selector"].items() - dep["template"]["metadata"]["labels"].items(): fail("Service selects no pod")
ports = {p["name"] for p in c["ports"]}
if any(p["targetPort"] not in ports for p in svc["ports"]): fail("Service targetPort not a container port")
if "infermon.yml" not in kinds["ConfigMap"]["data"]: fail("ConfigMap has no infermon.yml")
yaml.safe_load(kinds["ConfigMap"]["data"]["infermon.yml"])
open(os.path.join(tmp, "cm.yml"), "w").write(kinds["ConfigMap"]["data"]["infermon.yml"])

# What the code requests.
want = set()
k8s = os.path.join(src, "src/discovery/k8s_client.c")
groups = {"/api/v1": "", "/apis/discovery.k8s.io/v1": "discovery.k8s.io",
          "/apis/networking.k8s.io/v1": "networking.k8s.io"}
if os.path.exists(k8s):
    t = open(k8s).read()
    g = re.search(r"groups\[K8S_NROLES\]\s*=\s*\{([^}]*)\}", t)
    r = re.search(r"res\[K8S_NROLES\]\s*=\s*\{([^}]*)\}", t)
    if not g or not r: fail("discovery's resource table not found in k8s_client.c")
    for gg, rr in zip(re.findall(r'"([^"]+)"', g.group(1)), re.findall(r'"([^"]+)"', r.group(1))):
        want |= {(groups[gg], rr, "list"), (groups[gg], rr, "watch")}
else:
    # Before kubernetes_sd_configs is merged: the roles Prometheus' discovery lists and watches.
    for gg, rr in (("", "pods"), ("", "services"), ("", "endpoints"), ("", "nodes"),
                   ("discovery.k8s.io", "endpointslices"), ("networking.k8s.io", "ingresses")):
        want |= {(gg, rr, "list"), (gg, rr, "watch")}
# The in-cluster default's roles are among them.
for role in re.findall(r"- role: (\w+)", open(os.path.join(tmp, "incluster.yml")).read()):
    res = {"pod": "pods"}[role]
    if ("", res, "watch") not in want: fail("in-cluster role %s not watched" % role)
api = open(os.path.join(src, "src/discovery/monitors_api.c")).read()
for res in re.findall(r'"(servicemonitors|podmonitors)"', api):
    want.add(("monitoring.coreos.com", res, "list"))
    if "k8s_watcher_start(" in api:  # watched between reloads
        want.add(("monitoring.coreos.com", res, "watch"))
if "/secrets/" in api: want.add(("", "secrets", "get"))
if '.resource = "secrets"' in api:  # each referenced Secret watched by name
    want |= {("", "secrets", "list"), ("", "secrets", "watch")}
if "credentials_file: %s/token" in open(os.path.join(src, "src/discovery/incluster.c")).read():
    want.add(("nonResourceURL", "/metrics", "get"))

got = set()
for rule in kinds["ClusterRole"]["rules"]:
    verbs = rule["verbs"]
    if "*" in verbs or "*" in rule.get("resources", []) or "*" in rule.get("apiGroups", []):
        fail("wildcard in the ClusterRole")
    if "nonResourceURLs" in rule:
        got |= {("nonResourceURL", u, v) for u in rule["nonResourceURLs"] for v in verbs}
        continue
    got |= {(g, r, v) for g in rule["apiGroups"] for r in rule["resources"] for v in verbs}
if got != want:
    fail("ClusterRole grants %s more and %s less than the code requests" %
         (sorted(got - want), sorted(want - got)))
print("manifests ok: %d objects, ClusterRole = %d requested permissions" % (len(objs), len(want)))
PYEOF
# The ConfigMap's configuration loads (kubernetes_sd_configs needs the discovery
# subsystem; before it is merged the loader names that field and nothing else).
if ! "$IM_BINARY" check config "$IM_TMP/cm.yml" > "$IM_TMP/cm.out"; then
  grep -q 'field kubernetes_sd_configs not found' "$IM_TMP/cm.out" || { cat "$IM_TMP/cm.out"; fail "ConfigMap's infermon.yml"; }
fi
echo "PASS: deploy/kubernetes manifests"
