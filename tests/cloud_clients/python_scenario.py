#!/usr/bin/python3
"""A Cloud TPU v2 scenario through Google's Python client, against tpusim.

Runs with Debian's python3-googleapi 1.7.12 (google-api-python-client),
python3-google-auth and python3-google-auth-httplib2, as a user of the real
Cloud TPU API would write it:

    /usr/bin/python3 python_scenario.py --endpoint http://127.0.0.1:8470 \
        --token-file TOKENS --zone us-east5-a --project my-project

The client is built from the discovery document the emulator serves, as
googleapiclient.discovery.build() fetches Google's: first from
ENDPOINT/discovery/v1/apis/tpu/v2/rest, and the step discovery.v2_form
from ENDPOINT/$discovery/rest?version=v2. Version 1.7.12 has no
client_options, so requests go to the document's rootUrl: the emulator must
give its own address there. --discovery-file builds the client from a local
document instead (its rootUrl replaced by the endpoint), for trying the
scenario on a server that does not serve the document.

Each step prints `ok NAME` or `FAIL NAME: message`; the last line is
`N of M steps passed`, and the exit status is 1 when a step failed. The
world is examples/cloud/capacity.toml's: us-east5-a holds v5p and v6e chips
and a project may hold 2048 v5p chips there.
"""

import argparse
import json
import sys
import time
import traceback
import uuid

import google.oauth2.credentials
import google_auth_httplib2
import httplib2
from googleapiclient import discovery
from googleapiclient.errors import HttpError
from googleapiclient.http import build_http

V1_DISCOVERY = "/discovery/v1/apis/{api}/{apiVersion}/rest"
V2_DISCOVERY = "/$discovery/rest?version={apiVersion}"
TYPE_PREFIX = "type.googleapis.com/google.cloud.tpu.v2."


class StepFailed(Exception):
    pass


def check(condition, message):
    if not condition:
        raise StepFailed(message)


def error_of(e):
    """(HTTP status, error.status, error.message) of an HttpError."""
    try:
        body = json.loads(e.content.decode("utf-8") if isinstance(e.content, bytes) else e.content)
        err = body["error"]
        return e.resp.status, err.get("status"), err.get("message")
    except (ValueError, KeyError, TypeError, AttributeError):
        return e.resp.status, None, "(not a Google error body) %r" % (e.content[:200],)


def expect_error(request, http_status, status, http=None):
    """Executes `request`, which must fail with `http_status` and Google's
    error body with `status`; returns the message."""
    try:
        response = request.execute(http=http) if http is not None else request.execute()
    except HttpError as e:
        got_http, got_status, message = error_of(e)
        check(got_http == http_status and got_status == status,
              "expected HTTP %d %s, got HTTP %d %s: %s" % (http_status, status, got_http,
                                                          got_status, message))
        # Google's body repeats the HTTP status as error.code.
        body = json.loads(e.content.decode("utf-8"))
        check(body["error"].get("code") == http_status,
              "error.code is %r, not %d" % (body["error"].get("code"), http_status))
        return message
    raise StepFailed("expected HTTP %d %s, the call succeeded: %s" %
                     (http_status, status, json.dumps(response)[:300]))


class Scenario:

    def __init__(self, args):
        self.args = args
        self.parent = "projects/%s/locations/%s" % (args.project, args.zone)
        # Ids of this run, so that runs against one server do not collide.
        run = "py" + uuid.uuid4().hex[:6]
        self.n1 = "%s/nodes/%s-n1" % (self.parent, run)
        self.n2 = "%s/nodes/%s-n2" % (self.parent, run)
        self.qr_spot = "%s/queuedResources/%s-qspot" % (self.parent, run)
        self.qr_guaranteed = "%s/queuedResources/%s-qgtd" % (self.parent, run)
        self.qr_nodes = {self.qr_spot: run + "-qspot-node", self.qr_guaranteed: run + "-qgtd-node"}
        self.run = run
        with open(args.token_file) as f:
            lines = [l.strip() for l in f if l.strip() and not l.strip().startswith("#")]
        if not lines:
            raise SystemExit("%s: no token" % args.token_file)
        self.credentials = google.oauth2.credentials.Credentials(lines[0])
        self.tpu = None
        self.create_op = None  # the operation that made n1
        self.results = []

    # --- helpers -----------------------------------------------------------

    def nodes(self):
        return self.tpu.projects().locations().nodes()

    def queued(self):
        return self.tpu.projects().locations().queuedResources()

    def operations(self):
        return self.tpu.projects().locations().operations()

    def wait(self, op, verb, target):
        """Polls `op` through operations.get until done; checks its metadata
        and that it has no error; returns the finished operation."""
        check(isinstance(op, dict) and op.get("name", "").startswith(self.parent + "/operations/"),
              "not an operation of %s: %s" % (self.parent, json.dumps(op)[:300]))
        meta = op.get("metadata", {})
        check(meta.get("@type") == TYPE_PREFIX + "OperationMetadata",
              "operation metadata @type is %r" % meta.get("@type"))
        check(meta.get("verb") == verb and meta.get("target") == target,
              "operation metadata has verb %r target %r, expected %r %r" %
              (meta.get("verb"), meta.get("target"), verb, target))
        deadline = time.time() + self.args.operation_timeout
        while not op.get("done"):
            check(time.time() < deadline, "operation %s not done after %gs" %
                  (op["name"], self.args.operation_timeout))
            time.sleep(0.25)
            name = op["name"]
            op = self.operations().get(name=name).execute()
            check(op.get("name") == name, "operations.get(%s) returned %r" % (name, op.get("name")))
        check("error" not in op,
              "operation %s failed: %s" % (op["name"], json.dumps(op.get("error"))))
        check("endTime" in op.get("metadata", {}), "finished operation has no metadata.endTime")
        return op

    def wait_node_response(self, op, verb, node_name, state):
        op = self.wait(op, verb, node_name)
        resp = op.get("response", {})
        check(resp.get("@type") == TYPE_PREFIX + "Node",
              "%s operation's response @type is %r" % (verb, resp.get("@type")))
        check(resp.get("name") == node_name and resp.get("state") == state,
              "%s operation's response is node %r in state %r, expected %r in %s" %
              (verb, resp.get("name"), resp.get("state"), node_name, state))
        return resp

    def get_node(self, name):
        return self.nodes().get(name=name).execute()

    def list_all(self, method, key, **kwargs):
        """Pages through a list method with list_next; returns (items, pages)."""
        request = method.list(**kwargs)
        items, pages = [], []
        while request is not None:
            check(len(pages) < 1000, "more than 1000 pages")
            response = request.execute()
            page = response.get(key, [])
            pages.append(page)
            items.extend(page)
            request = method.list_next(request, response)
        return items, pages

    # --- steps -------------------------------------------------------------

    def build(self, discovery_path):
        endpoint = self.args.endpoint.rstrip("/")
        if self.args.discovery_file:
            with open(self.args.discovery_file) as f:
                doc = json.load(f)
            doc["rootUrl"] = doc["baseUrl"] = endpoint + "/"
            return discovery.build_from_document(doc, credentials=self.credentials)
        # As users build any Google API client; cache_discovery=False because
        # 1.7.12's file cache needs oauth2client's locked_file.
        return discovery.build("tpu", "v2", discoveryServiceUrl=endpoint + discovery_path,
                               credentials=self.credentials, cache_discovery=False)

    def check_client(self, tpu):
        # The requests must go to the emulator: a document with Google's own
        # rootUrl would send the token to tpu.googleapis.com.
        request = tpu.projects().locations().get(name=self.parent)
        prefix = self.args.endpoint.rstrip("/") + "/v2/" + self.parent
        check(request.uri.startswith(prefix + "?"),
              "requests go to %s, not to the emulator (%s...): the document's rootUrl must be the "
              "emulator's address" % (request.uri.split("?")[0], prefix))
        for m in ("list", "get", "generateServiceIdentity"):
            check(hasattr(tpu.projects().locations(), m), "the client has no locations.%s" % m)
        for resource, methods in [
            ("nodes", "list get create delete stop start patch getGuestAttributes list_next"),
            ("queuedResources", "list get create delete reset list_next"),
            ("operations", "list get delete cancel list_next"),
            ("acceleratorTypes", "list get list_next"),
            ("runtimeVersions", "list get list_next"),
        ]:
            collection = getattr(tpu.projects().locations(), resource)()
            for m in methods.split():
                check(hasattr(collection, m), "the client has no %s.%s" % (resource, m))
        return tpu

    def step_discovery(self):
        self.tpu = self.check_client(self.build(V1_DISCOVERY))
        zone = self.tpu.projects().locations().get(name=self.parent).execute()
        check(zone.get("locationId") == self.args.zone, "locations.get: %s" % json.dumps(zone))

    def step_discovery_v2_form(self):
        tpu = self.check_client(self.build(V2_DISCOVERY))
        zone = tpu.projects().locations().get(name=self.parent).execute()
        check(zone.get("locationId") == self.args.zone, "locations.get: %s" % json.dumps(zone))

    def step_catalog_accelerator_types(self):
        types = self.tpu.projects().locations().acceleratorTypes()
        items, pages = self.list_all(types, "acceleratorTypes", parent=self.parent, pageSize=2)
        check(all(len(p) <= 2 for p in pages),
              "pageSize=2 gave pages of %s items" % [len(p) for p in pages])
        check(len(pages) >= 2, "pageSize=2 gave %d page(s) of %d types" % (len(pages), len(items)))
        names = [t["name"] for t in items]
        check(len(set(names)) == len(names), "paging repeated types: %s" % names)
        full = types.list(parent=self.parent).execute().get("acceleratorTypes", [])
        check(sorted(t["name"] for t in full) == sorted(names),
              "pages hold %d types, one list %d" % (len(names), len(full)))
        by_type = {t["type"]: t for t in items}
        for name in ("v5p-8", "v6e-8"):
            check(name in by_type, "%s is not listed: %s" % (name, sorted(by_type)))
        check(all(t.split("-")[0] in ("v5p", "v6e") for t in by_type),
              "types not offered in %s listed: %s" % (self.args.zone, sorted(by_type)))
        t = types.get(name=self.parent + "/acceleratorTypes/v5p-8").execute()
        check(t.get("name") == self.parent + "/acceleratorTypes/v5p-8" and t.get("type") == "v5p-8",
              "acceleratorTypes.get: %s" % json.dumps(t))
        check(t.get("acceleratorConfigs") == [{"type": "V5P", "topology": "2x2x1"}],
              "v5p-8's acceleratorConfigs: %s" % json.dumps(t.get("acceleratorConfigs")))

    def step_catalog_runtime_versions(self):
        versions = self.tpu.projects().locations().runtimeVersions()
        items, _ = self.list_all(versions, "runtimeVersions", parent=self.parent)
        listed = [v.get("version") for v in items]
        check("v2-alpha-tpuv5" in listed and "tpu-ubuntu2204-base" in listed,
              "runtime versions: %s" % listed)
        check(all(v["name"] == self.parent + "/runtimeVersions/" + v["version"] for v in items),
              "runtime version names: %s" % [v["name"] for v in items])
        v = versions.get(name=self.parent + "/runtimeVersions/v2-alpha-tpuv5").execute()
        check(v == {"name": self.parent + "/runtimeVersions/v2-alpha-tpuv5",
                    "version": "v2-alpha-tpuv5"}, "runtimeVersions.get: %s" % json.dumps(v))

    def step_locations_list(self):
        locations = self.tpu.projects().locations()
        items, _ = self.list_all(locations, "locations", name="projects/" + self.args.project)
        ids = sorted(l.get("locationId") for l in items)
        check(ids == ["us-central2-b", "us-east5-a"], "locations: %s" % ids)
        check(all(l["name"] == "projects/%s/locations/%s" % (self.args.project, l["locationId"])
                  for l in items), "location names: %s" % [l["name"] for l in items])

    def step_locations_get(self):
        loc = self.tpu.projects().locations().get(
            name="projects/%s/locations/us-central2-b" % self.args.project).execute()
        check(loc.get("locationId") == "us-central2-b" and
              loc.get("name") == "projects/%s/locations/us-central2-b" % self.args.project,
              "locations.get: %s" % json.dumps(loc))

    def step_nodes_create(self):
        # n1 by accelerator type, n2 by acceleratorConfig; both are made at
        # once, then awaited.
        op1 = self.nodes().create(parent=self.parent, nodeId=self.n1.split("/")[-1], body={
            "acceleratorType": "v5p-8",
            "runtimeVersion": "v2-alpha-tpuv5",
            "description": "python scenario",
            "labels": {"team": "a", "run": self.run},
            "metadata": {"startup-script": "echo hi"},
        }).execute()
        op2 = self.nodes().create(parent=self.parent, nodeId=self.n2.split("/")[-1], body={
            "acceleratorConfig": {"type": "V6E", "topology": "2x4"},
            "runtimeVersion": "v2-alpha-tpuv6e",
        }).execute()
        self.create_op = op1["name"]
        n1 = self.wait_node_response(op1, "create", self.n1, "READY")
        n2 = self.wait_node_response(op2, "create", self.n2, "READY")
        check(n1.get("acceleratorType") == "v5p-8" and n1.get("runtimeVersion") == "v2-alpha-tpuv5",
              "n1: %s" % json.dumps(n1))
        check(n2.get("acceleratorType") == "v6e-8",
              "n2 made from acceleratorConfig V6E 2x4 is %r" % n2.get("acceleratorType"))
        for n in (n1, n2):
            endpoints = n.get("networkEndpoints", [])
            check(len(endpoints) >= 1 and all("ipAddress" in e for e in endpoints),
                  "%s's networkEndpoints: %s" % (n["name"], json.dumps(endpoints)))

    def step_nodes_get(self):
        n = self.get_node(self.n1)
        check(n.get("name") == self.n1 and n.get("state") == "READY", "node %s is %r" %
              (n.get("name"), n.get("state")))
        check(n.get("acceleratorConfig") == {"type": "V5P", "topology": "2x2x1"},
              "acceleratorConfig: %s" % json.dumps(n.get("acceleratorConfig")))
        check(n.get("labels") == {"team": "a", "run": self.run}, "labels: %s" % n.get("labels"))
        check(n.get("description") == "python scenario", "description: %r" % n.get("description"))
        check(n.get("metadata") == {"startup-script": "echo hi"},
              "metadata: %s" % n.get("metadata"))
        check(n.get("health") == "HEALTHY", "health: %r" % n.get("health"))
        check(n.get("apiVersion") == "V2", "apiVersion: %r" % n.get("apiVersion"))
        check(isinstance(n.get("createTime"), str) and n["createTime"].endswith("Z"),
              "createTime: %r" % n.get("createTime"))
        check(isinstance(n.get("id"), str) and n["id"].isdigit(), "id (int64, a string): %r" %
              n.get("id"))

    def step_nodes_list(self):
        items, pages = self.list_all(self.nodes(), "nodes", parent=self.parent, pageSize=1)
        check(all(len(p) == 1 for p in pages), "pageSize=1 gave pages of %s nodes" %
              [len(p) for p in pages])
        names = [n["name"] for n in items]
        check(len(set(names)) == len(names), "paging repeated nodes: %s" % names)
        check(self.n1 in names and self.n2 in names, "%s and %s not both in %s" %
              (self.n1, self.n2, names))
        check(len(pages) >= 2, "%d page(s)" % len(pages))

    def step_nodes_stop(self):
        # No body: StopNodeRequest has no fields besides the name.
        op = self.nodes().stop(name=self.n1).execute()
        self.wait_node_response(op, "stop", self.n1, "STOPPED")
        n = self.get_node(self.n1)
        check(n.get("state") == "STOPPED", "after stop the node is %r" % n.get("state"))

    def step_errors_failed_precondition(self):
        # n1 is STOPPED: stopping it again is refused; n2 is READY: so is
        # starting it.
        expect_error(self.nodes().stop(name=self.n1, body={}), 400, "FAILED_PRECONDITION")
        expect_error(self.nodes().start(name=self.n2, body={}), 400, "FAILED_PRECONDITION")
        check(self.get_node(self.n1).get("state") == "STOPPED", "n1 changed")
        check(self.get_node(self.n2).get("state") == "READY", "n2 changed")

    def step_nodes_start(self):
        op = self.nodes().start(name=self.n1, body={}).execute()
        self.wait_node_response(op, "start", self.n1, "READY")
        check(self.get_node(self.n1).get("state") == "READY", "after start the node is not READY")

    def step_nodes_patch(self):
        op = self.nodes().patch(name=self.n1, updateMask="labels,description", body={
            "labels": {"team": "b"},
            "description": "patched",
            "metadata": {"not": "in the mask"},
        }).execute()
        resp = self.wait_node_response(op, "update", self.n1, "READY")
        check(resp.get("labels") == {"team": "b"} and resp.get("description") == "patched",
              "patch's response: labels %s description %r" % (resp.get("labels"),
                                                             resp.get("description")))
        n = self.get_node(self.n1)
        check(n.get("labels") == {"team": "b"} and n.get("description") == "patched",
              "after patch: labels %s description %r" % (n.get("labels"), n.get("description")))
        check(n.get("metadata") == {"startup-script": "echo hi"},
              "a field outside updateMask changed: metadata %s" % n.get("metadata"))

    def step_nodes_get_guest_attributes(self):
        # One GuestAttributes per worker, each a list of namespace/key/value.
        workers = len(self.get_node(self.n1).get("networkEndpoints", []))
        r = self.nodes().getGuestAttributes(name=self.n1, body={}).execute()
        attrs = r.get("guestAttributes")
        check(isinstance(attrs, list) and len(attrs) == workers and workers >= 1,
              "%d workers, getGuestAttributes: %s" % (workers, json.dumps(r)[:300]))
        for a in attrs:
            items = a.get("queryValue", {}).get("items")
            check(isinstance(items, list) and items and
                  all(isinstance(i, dict) and "key" in i and "value" in i for i in items),
                  "a worker's guest attributes: %s" % json.dumps(a)[:300])

    def step_errors_already_exists(self):
        expect_error(self.nodes().create(parent=self.parent, nodeId=self.n1.split("/")[-1], body={
            "acceleratorType": "v5p-8", "runtimeVersion": "v2-alpha-tpuv5"}), 409, "ALREADY_EXISTS")
        check(self.get_node(self.n1).get("labels") == {"team": "b"}, "the existing node changed")

    def step_nodes_delete(self):
        ops = [(n, self.nodes().delete(name=n).execute()) for n in (self.n1, self.n2)]
        for n, op in ops:
            op = self.wait(op, "delete", n)
            empty = "type.googleapis.com/google.protobuf.Empty"
            check(op.get("response", {}).get("@type") == empty,
                  "delete's response: %s" % json.dumps(op.get("response")))
            expect_error(self.nodes().get(name=n), 404, "NOT_FOUND")

    def step_operations_list(self):
        items, pages = self.list_all(self.operations(), "operations", name=self.parent, pageSize=3)
        check(all(len(p) <= 3 for p in pages),
              "pageSize=3 gave pages of %s" % [len(p) for p in pages])
        names = [o["name"] for o in items]
        check(len(set(names)) == len(names), "paging repeated operations")
        # This run's: 2 creates, stop, start, update, 2 deletes at least.
        mine = [o for o in items if o.get("metadata", {}).get("target") in (self.n1, self.n2)]
        verbs = sorted(o["metadata"].get("verb") for o in mine)
        check(verbs == ["create", "create", "delete", "delete", "start", "stop", "update"],
              "this run's operations have verbs %s" % verbs)
        check(all(o.get("done") for o in mine), "an operation of this run is not done")
        check(self.create_op in names, "%s is not listed" % self.create_op)

    def step_operations_get(self):
        op = self.operations().get(name=self.create_op).execute()
        check(op.get("name") == self.create_op and op.get("done") is True,
              "operations.get: %s" % json.dumps(op)[:300])
        check(op.get("response", {}).get("name") == self.n1 and
              op["metadata"].get("verb") == "create",
              "the create operation's response: %s" % json.dumps(op.get("response"))[:300])

    def qr_body(self, name, tier, node):
        return {
            "tpu": {"nodeSpec": [{"parent": self.parent, "nodeId": self.qr_nodes[name],
                                  "node": node}]},
            tier: {},
        }

    def create_qr(self, name, tier, node):
        op = self.queued().create(parent=self.parent, queuedResourceId=name.split("/")[-1],
                                  body=self.qr_body(name, tier, node)).execute()
        op = self.wait(op, "create", name)
        resp = op.get("response", {})
        check(resp.get("@type") == TYPE_PREFIX + "QueuedResource" and resp.get("name") == name,
              "create's response: %s" % json.dumps(resp)[:300])
        check(tier in resp,
              "the queued resource lost its tier %s: %s" % (tier, json.dumps(resp)[:300]))
        state = resp.get("state", {}).get("state")
        check(state in ("CREATING", "ACCEPTED", "WAITING_FOR_RESOURCES", "PROVISIONING", "ACTIVE"),
              "a new queued resource is %r" % state)

    def step_queued_resources_create_spot(self):
        self.create_qr(self.qr_spot, "spot",
                       {"acceleratorType": "v5p-8", "runtimeVersion": "v2-alpha-tpuv5"})

    def step_queued_resources_create_guaranteed(self):
        self.create_qr(self.qr_guaranteed, "guaranteed",
                       {"acceleratorType": "v6e-4", "runtimeVersion": "v2-alpha-tpuv6e"})

    def step_queued_resources_get(self):
        # Both are served: ACTIVE, with their node READY.
        deadline = time.time() + self.args.operation_timeout
        for name in (self.qr_spot, self.qr_guaranteed):
            while True:
                qr = self.queued().get(name=name).execute()
                check(qr.get("name") == name,
                      "queuedResources.get(%s): %r" % (name, qr.get("name")))
                state = qr.get("state", {}).get("state")
                if state == "ACTIVE":
                    break
                check(state in ("CREATING", "ACCEPTED", "WAITING_FOR_RESOURCES", "PROVISIONING"),
                      "%s is %r" % (name, state))
                check(time.time() < deadline, "%s not ACTIVE after %gs: %r" %
                      (name, self.args.operation_timeout, state))
                time.sleep(0.25)
            spec = qr.get("tpu", {}).get("nodeSpec", [])
            check(len(spec) == 1 and spec[0].get("nodeId") == self.qr_nodes[name],
                  "nodeSpec: %s" % json.dumps(spec))
            node = self.get_node("%s/nodes/%s" % (self.parent, self.qr_nodes[name]))
            check(node.get("queuedResource") == name and node.get("state") == "READY",
                  "%s's node: queuedResource %r state %r" % (name, node.get("queuedResource"),
                                                             node.get("state")))
            spot = node.get("schedulingConfig", {}).get("spot", False)
            check(spot == (name == self.qr_spot), "%s's node has schedulingConfig %s" %
                  (name, node.get("schedulingConfig")))

    def step_queued_resources_list(self):
        items, _ = self.list_all(self.queued(), "queuedResources", parent=self.parent)
        by_name = {q["name"]: q for q in items}
        check(self.qr_spot in by_name and self.qr_guaranteed in by_name,
              "queued resources listed: %s" % sorted(by_name))
        check("spot" in by_name[self.qr_spot] and "guaranteed" in by_name[self.qr_guaranteed],
              "listed tiers are wrong")

    def step_queued_resources_delete(self):
        # Their nodes are still there: force deletes them with the request.
        ops = [(q, self.queued().delete(name=q, force=True).execute())
               for q in (self.qr_spot, self.qr_guaranteed)]
        for q, op in ops:
            op = self.wait(op, "delete", q)
            expect_error(self.queued().get(name=q), 404, "NOT_FOUND")
            node = "%s/nodes/%s" % (self.parent, self.qr_nodes[q])
            expect_error(self.nodes().get(name=node), 404, "NOT_FOUND")

    def step_errors_not_found(self):
        missing = self.run + "-missing"
        message = expect_error(self.nodes().get(name=self.parent + "/nodes/" + missing), 404,
                               "NOT_FOUND")
        check(missing in (message or ""), "the message does not name the node: %r" % message)
        expect_error(self.operations().get(name=self.parent + "/operations/" + missing), 404,
                     "NOT_FOUND")

    def step_errors_resource_exhausted(self):
        # v5p-8192 is 4096 chips; the project may hold 2048 v5p chips here.
        message = expect_error(self.nodes().create(
            parent=self.parent, nodeId=self.run + "-huge",
            body={"acceleratorType": "v5p-8192", "runtimeVersion": "v2-alpha-tpuv5"}),
            429, "RESOURCE_EXHAUSTED")
        check("uota" in (message or ""), "the message does not say quota: %r" % message)
        expect_error(self.nodes().get(name=self.parent + "/nodes/" + self.run + "-huge"), 404,
                     "NOT_FOUND")

    def step_errors_invalid_argument(self):
        body = {"acceleratorType": "v5p-8", "runtimeVersion": "v2-alpha-tpuv5"}
        expect_error(self.nodes().create(parent=self.parent, nodeId="Bad_Id", body=body), 400,
                     "INVALID_ARGUMENT")
        expect_error(self.nodes().create(
            parent=self.parent, nodeId=self.run + "-bad",
            body={"acceleratorType": "v9x-8", "runtimeVersion": "v2-alpha-tpuv5"}), 400,
            "INVALID_ARGUMENT")
        # v4 is offered in us-central2-b, not here.
        expect_error(self.nodes().create(
            parent=self.parent, nodeId=self.run + "-bad",
            body={"acceleratorType": "v4-8", "runtimeVersion": "tpu-vm-base"}), 400,
            "INVALID_ARGUMENT")
        expect_error(self.nodes().get(name=self.parent + "/nodes/" + self.run + "-bad"), 404,
                     "NOT_FOUND")

    def step_errors_unauthenticated(self):
        # A token that cannot be refreshed: google-auth would otherwise try
        # to refresh it on the 401 and raise RefreshError instead.
        wrong = google.oauth2.credentials.Credentials("wrong-token-" + "x" * 24)
        http = google_auth_httplib2.AuthorizedHttp(wrong, http=build_http(),
                                                   refresh_status_codes=())
        expect_error(self.nodes().list(parent=self.parent), 401, "UNAUTHENTICATED", http=http)
        # And with no token at all.
        expect_error(self.nodes().list(parent=self.parent), 401, "UNAUTHENTICATED",
                     http=build_http())

    STEPS = [
        ("discovery", step_discovery),
        ("discovery.v2_form", step_discovery_v2_form),
        ("catalog.acceleratorTypes", step_catalog_accelerator_types),
        ("catalog.runtimeVersions", step_catalog_runtime_versions),
        ("locations.list", step_locations_list),
        ("locations.get", step_locations_get),
        ("nodes.create", step_nodes_create),
        ("nodes.get", step_nodes_get),
        ("nodes.list", step_nodes_list),
        ("nodes.stop", step_nodes_stop),
        ("errors.failed_precondition", step_errors_failed_precondition),
        ("nodes.start", step_nodes_start),
        ("nodes.patch", step_nodes_patch),
        ("nodes.getGuestAttributes", step_nodes_get_guest_attributes),
        ("errors.already_exists", step_errors_already_exists),
        ("nodes.delete", step_nodes_delete),
        ("operations.list", step_operations_list),
        ("operations.get", step_operations_get),
        ("queuedResources.create_spot", step_queued_resources_create_spot),
        ("queuedResources.create_guaranteed", step_queued_resources_create_guaranteed),
        ("queuedResources.get", step_queued_resources_get),
        ("queuedResources.list", step_queued_resources_list),
        ("queuedResources.delete", step_queued_resources_delete),
        ("errors.not_found", step_errors_not_found),
        ("errors.resource_exhausted", step_errors_resource_exhausted),
        ("errors.invalid_argument", step_errors_invalid_argument),
        ("errors.unauthenticated", step_errors_unauthenticated),
    ]

    def steps(self):
        for name, fn in self.STEPS:
            if self.args.only and name not in self.args.only:
                continue
            # A local document is not fetched in either form.
            if self.args.discovery_file and name == "discovery.v2_form":
                continue
            yield name, fn

    def run_steps(self):
        passed = total = 0
        for name, fn in self.steps():
            total += 1
            try:
                if self.tpu is None and not name.startswith("discovery"):
                    raise StepFailed("no client: the discovery step failed")
                fn(self)
            except StepFailed as e:
                print("FAIL %s: %s" % (name, e), flush=True)
            except HttpError as e:
                http_status, status, message = error_of(e)
                print("FAIL %s: HTTP %d %s: %s (%s)" % (name, http_status, status, message,
                                                      (e.uri or "").split("?")[0]), flush=True)
            except Exception as e:  # pylint: disable=broad-except
                print("FAIL %s: %s: %s" % (name, type(e).__module__ + "." + type(e).__name__, e),
                      flush=True)
                if self.args.verbose:
                    traceback.print_exc()
            else:
                passed += 1
                print("ok %s" % name, flush=True)
        print("%d of %d steps passed" % (passed, total), flush=True)
        return passed == total

    def cleanup(self):
        """Best effort: removes what a failed step left behind."""
        if self.tpu is None:
            return
        for name in (self.qr_spot, self.qr_guaranteed):
            try:
                self.queued().delete(name=name, force=True).execute()
            except Exception:  # pylint: disable=broad-except
                pass
        for name in (self.n1, self.n2):
            try:
                self.nodes().delete(name=name).execute()
            except Exception:  # pylint: disable=broad-except
                pass


def trace_requests():
    """Prints each HTTP request the client makes to stderr."""
    original = httplib2.Http.request

    def request(self, uri, method="GET", body=None, headers=None, *args, **kwargs):
        shown = {k: ("Bearer ..." if k.lower() == "authorization" else v)
                 for k, v in (headers or {}).items()}
        sys.stderr.write("> %s %s %s body=%r\n" % (method, uri, shown, body))
        resp, content = original(self, uri, method, body, headers, *args, **kwargs)
        sys.stderr.write("< %s %s %s\n" % (resp.status, dict(resp), content[:200]))
        return resp, content

    httplib2.Http.request = request


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--endpoint", required=True,
                        help="the emulator, e.g. http://127.0.0.1:8470")
    parser.add_argument("--token-file", required=True,
                        help="bearer tokens, one per line; the first is used")
    parser.add_argument("--zone", default="us-east5-a")
    parser.add_argument("--project", default="my-project")
    parser.add_argument("--discovery-file",
                        help="build the client from this discovery document (its rootUrl "
                        "replaced by the endpoint) instead of fetching it from the endpoint")
    parser.add_argument("--operation-timeout", type=float, default=120.0,
                        help="real seconds an operation or a queued resource may take")
    parser.add_argument("--only", nargs="*", help="run only these steps")
    parser.add_argument("--trace", action="store_true", help="print every HTTP request to stderr")
    parser.add_argument("-v", "--verbose", action="store_true",
                        help="tracebacks of unexpected errors")
    args = parser.parse_args()
    if args.trace:
        trace_requests()
    scenario = Scenario(args)
    try:
        ok = scenario.run_steps()
    finally:
        scenario.cleanup()
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
