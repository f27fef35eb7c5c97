#!/usr/bin/python3
"""End-to-end tests of `tpusim cloud`: the server, its gcloud-shaped client,
the REST API's guards, queues and preemption, jobs over ssh that resume from
checkpoints, a load of 10,000 calls from 50 clients, and SIGKILL/restart
cycles during creates and deletes.

usage: cloud_test.py TPUSIM EXAMPLES [--kill-cycles N] [--calls N]
Standard library only: the API is plain HTTP and JSON.
"""
import argparse
import http.client
import json
import os
import random
import shutil
import signal
import subprocess
import sys
import tempfile
import threading
import time
import urllib.error
import urllib.request

TOKEN = "test-token-0123456789abcdef"
WORLD = """
seed = 11
speed = {speed}
[durations]
create = 1
delete = 1
stop = 1
start = 1
[zones.us-central2-b]
v4 = {v4}
[zones.us-east5-a]
v5p = 256
[maintenance]
notice = 0
duration = 3600
"""


def fail(message):
    sys.exit("cloud_test: FAIL: " + message)


class Server:
    """A `tpusim cloud serve` on a free port."""

    running = []  # every server started, so that main() stops them all

    def __init__(self, tpusim, work, name, speed=1000.0, v4=4096, extra=(), builtin_world=False):
        self.tpusim, self.work, self.extra = tpusim, work, list(extra)
        self.builtin_world = builtin_world
        self.db = os.path.join(work, name + ".sqlite")
        self.capacity = os.path.join(work, name + ".toml")
        self.port_file = os.path.join(work, name + ".port")
        self.log = open(os.path.join(work, name + ".log"), "ab")
        with open(self.capacity, "w") as f:
            f.write(WORLD.format(speed=speed, v4=v4))
        self.proc = None
        self.start()

    def start(self):
        if os.path.exists(self.port_file):
            os.remove(self.port_file)
        self.proc = subprocess.Popen(
            [self.tpusim, "cloud", "serve", "--db", self.db] +
            ([] if self.builtin_world else ["--capacity", self.capacity]) +
            ["--tokens", os.path.join(self.work, "tokens"), "--port", "0",
             "--port-file", self.port_file] + self.extra,
            stdout=self.log, stderr=self.log)
        Server.running.append(self.proc)
        deadline = time.time() + 30
        while not os.path.exists(self.port_file):
            if self.proc.poll() is not None or time.time() > deadline:
                fail("the server did not start; see " + self.log.name)
            time.sleep(0.005)
        with open(self.port_file) as f:
            self.url = "http://127.0.0.1:" + f.read().strip()

    def kill(self):
        self.proc.send_signal(signal.SIGKILL)
        self.proc.wait()

    def stop(self):
        self.proc.terminate()
        if self.proc.wait(timeout=30) != 0:
            fail("the server exited with %d on SIGTERM" % self.proc.returncode)

    def call(self, method, path, body=None, token=TOKEN, data=None):
        """(HTTP status, parsed JSON body)."""
        return self.request(method, path, body, token, data)[:2]

    def request(self, method, path, body=None, token=TOKEN, data=None):
        """(HTTP status, parsed JSON body, response headers)."""
        if data is None and body is not None:
            data = json.dumps(body).encode()
        req = urllib.request.Request(self.url + path, data=data, method=method)
        if token is not None:
            req.add_header("Authorization", "Bearer " + token)
        if data is not None:
            req.add_header("Content-Type", "application/json")
        try:
            with urllib.request.urlopen(req, timeout=30) as r:
                return r.status, json.loads(r.read() or b"{}"), r.headers
        except urllib.error.HTTPError as e:
            text = e.read()
            try:
                return e.code, json.loads(text), e.headers
            except ValueError:
                fail("%s %s: HTTP %d with a body that is not JSON: %r" % (method, path, e.code, text[:200]))

    def call_text(self, path):
        """The text body of a GET (for /metrics)."""
        req = urllib.request.Request(self.url + path, headers={"Authorization": "Bearer " + TOKEN})
        with urllib.request.urlopen(req, timeout=30) as r:
            return r.read().decode()

    def cli(self, *args, ok=True):
        env = dict(os.environ, TPUSIM_CLOUD_TOKEN=TOKEN, TPUSIM_CLOUD_ENDPOINT=self.url,
                   TPUSIM_CLOUD_PROJECT="p")
        r = subprocess.run([self.tpusim, "cloud"] + list(args), env=env, capture_output=True,
                           text=True, timeout=300)
        if ok and r.returncode != 0:
            fail("tpusim cloud %s: exit %d: %s" % (" ".join(args), r.returncode, r.stderr))
        if not ok and r.returncode == 0:
            fail("tpusim cloud %s succeeded" % " ".join(args))
        return r


NODES = "/v2/projects/p/locations/us-central2-b/nodes"
ZONE = ["--zone", "us-central2-b"]


def wait_for(what, predicate, seconds=30):
    deadline = time.time() + seconds
    while not predicate():
        if time.time() > deadline:
            fail("timed out waiting for " + what)
        time.sleep(0.02)


def test_cli(s):
    s.cli("tpus", "tpu-vm", "create", "n1", "--accelerator-type", "v4-32", "--version",
          "tpu-ubuntu2204-base", "--labels", "team=ml,env=test", *ZONE)
    table = s.cli("tpus", "tpu-vm", "list", *ZONE).stdout.splitlines()
    if table[0].split() != ["NAME", "ZONE", "ACCELERATOR_TYPE", "TOPOLOGY", "NETWORK", "STATUS"] or \
            table[1].split() != ["n1", "us-central2-b", "v4-32", "2x2x4", "default", "READY"]:
        fail("tpu-vm list: %r" % table)
    node = json.loads(s.cli("tpus", "tpu-vm", "describe", "n1", "--format", "json", *ZONE).stdout)
    if node["state"] != "READY" or len(node["networkEndpoints"]) != 4 or node["labels"]["team"] != "ml":
        fail("describe: %r" % node)
    listed = json.loads(s.cli("tpus", "tpu-vm", "list", "--format", "json", *ZONE).stdout)
    if [n["name"] for n in listed] != ["projects/p/locations/us-central2-b/nodes/n1"]:
        fail("list --format json: %r" % listed)
    yaml = s.cli("tpus", "tpu-vm", "describe", "n1", *ZONE).stdout
    if "state: READY\n" not in yaml or 'topology: "2x2x4"\n' not in yaml:
        fail("describe (yaml): %s" % yaml)
    again = s.cli("tpus", "tpu-vm", "create", "n1", "--accelerator-type", "v4-8", "--version",
                  "tpu-ubuntu2204-base", *ZONE, ok=False)
    if "ALREADY_EXISTS" not in again.stderr or again.stderr.count("\n") > 1 + again.stderr.count("issued"):
        fail("create twice: %s" % again.stderr)
    missing = s.cli("tpus", "tpu-vm", "describe", "nope", *ZONE, ok=False)
    if not missing.stderr.startswith("tpusim: NOT_FOUND: ") or missing.returncode != 2:
        fail("describe nope: %d %s" % (missing.returncode, missing.stderr))
    s.cli("tpus", "tpu-vm", "stop", "n1", *ZONE)
    s.cli("tpus", "tpu-vm", "start", "n1", *ZONE)
    s.cli("tpus", "tpu-vm", "create", "a1", "--accelerator-type", "v4-8", "--version",
          "tpu-ubuntu2204-base", "--async", *ZONE)
    s.cli("tpus", "tpu-vm", "delete", "a1", "--quiet", *ZONE)
    status, _ = s.call("GET", NODES + "/a1")
    if status != 404:
        fail("a1 not deleted: %d" % status)
    types = s.cli("tpus", "accelerator-types", "list", *ZONE).stdout.split()
    if types[0] != "ACCELERATOR_TYPE" or "v4-4096" not in types or "v5p-8" in types:
        fail("accelerator-types list: %r" % types)
    if "tpu-ubuntu2204-base" not in s.cli("tpus", "versions", "list", *ZONE).stdout:
        fail("versions list")
    bad = s.cli("tpus", "tpu-vm", "create", "x", "--accelerator-type", "v4-7", "--version",
                "tpu-ubuntu2204-base", *ZONE, ok=False)
    if "INVALID_ARGUMENT" not in bad.stderr:
        fail("bad accelerator type: %s" % bad.stderr)


def test_guards(s):
    if s.call("GET", NODES, token=None)[0] != 401:
        fail("no token accepted")
    for wrong in ["x", TOKEN[:-1] + "0", TOKEN + "0"]:
        status, body = s.call("GET", NODES, token=wrong)
        if status != 401 or body["error"]["status"] != "UNAUTHENTICATED":
            fail("token %r: %d %r" % (wrong, status, body))
    if s.call("GET", "/metrics", token=None)[0] != 401:
        fail("/metrics without a token")
    status, body = s.call("POST", NODES + "?nodeId=big", data=b"{" + b" " * (2 << 20) + b"}")
    if status != 413 or body["error"]["status"] != "INVALID_ARGUMENT":
        fail("2 MiB body: %d %r" % (status, body))
    for path in ["/v2/projects/p/locations/us-central2-b/nodes/..%2f..%2fetc", "/v2/../../etc/passwd",
                 "/v2/projects/p/locations/us-central2-b/secrets", "/etc/passwd"]:
        status, body = s.call("GET", path)
        if status != 404 or body["error"]["status"] != "NOT_FOUND":
            fail("%s: %d %r" % (path, status, body))
    status, body = s.call("POST", NODES + "?nodeId=q", data=b"{\"acceleratorType\": ")
    if status != 400 or body["error"]["status"] != "INVALID_ARGUMENT":
        fail("malformed JSON: %d %r" % (status, body))
    quoted = "'; DROP TABLE documents; --"
    status, _ = s.call("GET", NODES + "/" + urllib.request.quote(quoted))
    if status != 404 or s.call("GET", NODES)[0] != 200:
        fail("SQL in a name")


def raw_request(s, text):
    """The status line and body of `text` sent as is (no Content-Length)."""
    import socket
    host, port = s.url[len("http://"):].split(":")
    with socket.create_connection((host, int(port)), timeout=30) as c:
        c.sendall(text.encode())
        reply = b""
        while b"\r\n\r\n" not in reply:
            reply += c.recv(65536)
        head, _, body = reply.partition(b"\r\n\r\n")
        length = int(next(l.split(b":")[1] for l in head.split(b"\r\n")
                          if l.lower().startswith(b"content-length")))
        while len(body) < length:
            body += c.recv(65536)
        return head.split(b"\r\n")[0].decode(), json.loads(body)


def test_client_forms(s, tpusim, work):
    """What Google's own clients send and expect (tests/cloud_clients_test.py
    runs them): typed operation responses, locations under /v1, enums as
    numbers, guest attributes, paging of computed lists, bodiless POSTs, an
    RFC 6750 challenge, the discovery document; and the CLI's own errors."""
    status, op = s.call("POST", NODES + "?nodeId=f1",
                        {"acceleratorConfig": {"type": 7, "topology": "2x2x1"},
                         "runtimeVersion": "tpu-ubuntu2204-base", "labels": {}, "metadata": {}})
    if status != 200:
        fail("acceleratorConfig type 7: %d %r" % (status, op))
    wait_for("f1 created", lambda: s.call("GET", "/v2/" + op["name"])[1]["done"])
    done = s.call("GET", "/v2/" + op["name"])[1]
    if done["response"].get("@type") != "type.googleapis.com/google.cloud.tpu.v2.Node" or \
            done["response"]["acceleratorType"] != "v4-8":
        fail("create's response: %r" % done)
    line, body = raw_request(s, "POST /v2/projects/p/locations/us-central2-b/nodes/f1:stop HTTP/1.1\r\n"
                                "Host: x\r\nAuthorization: Bearer %s\r\n\r\n" % TOKEN)
    if " 200 " not in line or body["metadata"]["verb"] != "stop":
        fail("POST without a body: %s %r" % (line, body))
    status, attrs = s.call("POST", NODES + "/f1:getGuestAttributes", {"queryPath": "tpusim/worker-id"})
    items = [a["queryValue"]["items"] for a in attrs.get("guestAttributes", [])]
    if status != 200 or items != [[{"namespace": "tpusim", "key": "worker-id", "value": "0"}]]:
        fail("getGuestAttributes: %d %r" % (status, attrs))
    if s.call("POST", NODES + "/f1:getGuestAttributes", {"workerIds": ["1"]})[0] != 400:
        fail("getGuestAttributes of a worker v4-8 lacks")
    status, page = s.call("GET", "/v2/projects/p/locations/us-central2-b/acceleratorTypes?pageSize=2")
    if len(page["acceleratorTypes"]) != 2 or "nextPageToken" not in page:
        fail("acceleratorTypes pageSize=2: %r" % page)
    rest = s.call("GET", "/v2/projects/p/locations/us-central2-b/acceleratorTypes?pageToken=" +
                  page["nextPageToken"])[1]["acceleratorTypes"]
    if rest[0]["name"] == page["acceleratorTypes"][0]["name"] or len(rest) < 2:
        fail("acceleratorTypes' second page: %r" % rest)
    # The rest of the discovery document's methods: longrunning's cancel
    # (refused, as the spec allows) and delete, and the service identity.
    status, body = s.call("POST", "/v2/" + op["name"] + ":cancel", {})
    if status != 501 or body["error"]["status"] != "UNIMPLEMENTED":
        fail("operations cancel: %d %r" % (status, body))
    if s.call("DELETE", "/v2/" + op["name"])[0] != 200 or s.call("GET", "/v2/" + op["name"])[0] != 404:
        fail("operations delete")
    status, ident = s.call("POST", "/v2/projects/p/locations/us-central2-b:generateServiceIdentity", {})
    if status != 200 or not ident["identity"]["email"].endswith(".iam.gserviceaccount.com"):
        fail("generateServiceIdentity: %d %r" % (status, ident))
    status, locations = s.call("GET", "/v1/projects/p/locations")
    if status != 200 or len(locations["locations"]) != 2:
        fail("/v1 locations: %d %r" % (status, locations))
    status, _, headers = s.request("GET", NODES, token="wrong")
    if status != 401 or headers.get("WWW-Authenticate", "").count("=") < 1:
        fail("401's WWW-Authenticate: %r" % headers.get("WWW-Authenticate"))
    status, doc = s.call("GET", "/$discovery/rest?version=v2", token=None)
    if status != 200 or doc["rootUrl"] != s.url + "/" or \
            "getGuestAttributes" not in doc["resources"]["projects"]["resources"]["locations"]["resources"]["nodes"]["methods"]:
        fail("discovery document: %d %r" % (status, {k: doc.get(k) for k in ("rootUrl", "id")}))
    # The CLI: refusals exit 2, naming their status; its own mistakes are named.
    again = s.cli("tpus", "tpu-vm", "stop", "f1", *ZONE, ok=False)
    if again.returncode != 2 or "FAILED_PRECONDITION" not in again.stderr:
        fail("stop a stopped node: %d %s" % (again.returncode, again.stderr))
    word = s.cli("tpus", "tpu-vm", "frobnicate", ok=False)
    if "unknown command 'frobnicate' for tpusim cloud tpus tpu-vm (its commands: create," not in word.stderr:
        fail("tpu-vm frobnicate: %s" % word.stderr)
    env = dict(os.environ, TPUSIM_CLOUD_TOKEN=TOKEN, TPUSIM_CLOUD_ENDPOINT="http://127.0.0.1:1")
    away = subprocess.run([tpusim, "cloud", "tpus", "tpu-vm", "list", *ZONE], env=env,
                          capture_output=True, text=True, timeout=60)
    if away.returncode != 1 or "start one with `tpusim cloud serve`" not in away.stderr:
        fail("no server: %d %s" % (away.returncode, away.stderr))
    # A second server on the same port refuses to start.
    port = s.url.rsplit(":", 1)[1]
    second = subprocess.run([tpusim, "cloud", "serve", "--db", os.path.join(work, "second.sqlite"),
                             "--tokens", os.path.join(work, "tokens"), "--port", port],
                            capture_output=True, text=True, timeout=60)
    if second.returncode != 2 or "Address already in use" not in second.stderr:
        fail("a second server on port %s: %d %s" % (port, second.returncode, second.stderr))


def test_default_world(tpusim, work):
    """Without --capacity, the built-in world: every generation tpusim knows."""
    s = Server(tpusim, work, "default", builtin_world=True)
    zones = [l["locationId"] for l in s.call("GET", "/v2/projects/p/locations")[1]["locations"]]
    generations = set()
    for z in zones:
        for t in s.call("GET", "/v2/projects/p/locations/%s/acceleratorTypes" % z)[1]["acceleratorTypes"]:
            generations.add(t["type"].rsplit("-", 1)[0])
    if generations != {"v2", "v3", "v4", "v5litepod", "v5p", "v6e", "tpu7x"} or "us-east5-a" not in zones:
        fail("the default world: zones %r, generations %r" % (zones, generations))
    s.stop()


def test_rate_limit(tpusim, work):
    """A bucket of 2 calls refilled at 1 per second: 40 calls outrun it
    unless each took over a second, and the 429 says when to come back."""
    s = Server(tpusim, work, "rate", extra=["--rate", "1"])
    replies = [s.request("GET", NODES) for _ in range(40)]
    codes = [r[0] for r in replies]
    if codes.count(429) == 0 or codes[0] != 200:
        fail("--rate 1: %r" % codes)
    _, body, headers = next(r for r in replies if r[0] == 429)
    if body["error"]["message"] != "Rate limit exceeded: at most 1 calls per second per token":
        fail("429 message: %r" % body)
    retry_after = headers.get("Retry-After", "")
    if not retry_after.isdigit() or int(retry_after) < 1:
        fail("429 without a Retry-After in whole seconds: %r" % retry_after)
    time.sleep(int(retry_after))
    if s.call("GET", NODES)[0] != 200:
        fail("a call after Retry-After was refused")
    s.stop()


def test_queue_and_preemption(s):
    z = ["--zone", "us-east5-a"]
    s.cli("tpus", "queued-resources", "create", "spotq", "--node-id", "spot1", "--accelerator-type",
          "v5p-512", "--runtime-version", "v2-alpha-tpuv5", "--spot", *z)
    wait_for("spotq ACTIVE", lambda: s.call("GET", "/v2/projects/p/locations/us-east5-a/queuedResources/spotq")[1]["state"]["state"] == "ACTIVE")
    s.cli("tpus", "queued-resources", "create", "gq", "--node-id", "g1", "--accelerator-type",
          "v5p-8", "--runtime-version", "v2-alpha-tpuv5", "--guaranteed", *z)
    # The whole zone was spot: the guaranteed request takes it back.
    wait_for("g1 READY", lambda: s.call("GET", "/v2/projects/p/locations/us-east5-a/nodes/g1")[1].get("state") == "READY")
    spot = s.call("GET", "/v2/projects/p/locations/us-east5-a/nodes/spot1")[1]
    qr = s.call("GET", "/v2/projects/p/locations/us-east5-a/queuedResources/spotq")[1]
    if spot["state"] != "PREEMPTED" or qr["state"]["state"] != "SUSPENDED":
        fail("spot1 %s, spotq %s" % (spot["state"], qr["state"]))
    listed = s.cli("tpus", "queued-resources", "list", *z).stdout
    if "SUSPENDED" not in listed or "NODE_COUNT" not in listed:
        fail("queued-resources list: " + listed)
    s.cli("tpus", "queued-resources", "delete", "spotq", *z, ok=False)  # it still has a node
    s.cli("tpus", "queued-resources", "delete", "spotq", "--force", *z)
    metrics = s.call_text("/metrics")
    for line in ["tpusim_preemptions_total 1", 'tpusim_nodes{state="READY"}']:
        if line not in metrics:
            fail("/metrics lacks %r:\n%s" % (line, metrics))


def test_ssh_resume(s, examples, work):
    """A job on a spot node is preempted and resumes on a new node from its checkpoint."""
    program = os.path.join(examples, "train_step", "sgd.mlir")
    ck = os.path.join(work, "ck")
    # job1 asks for more steps than any machine runs before it is preempted,
    # so how fast this host is decides nothing; the resumed run then goes on
    # a few steps past the checkpoint it finds.
    common = ["--random-inputs", "--seed", "5", "--checkpoint-every", "5"]
    s.cli("tpus", "tpu-vm", "create", "job1", "--accelerator-type", "v4-8", "--version",
          "tpu-ubuntu2204-base", "--spot", *ZONE)
    env = dict(os.environ, TPUSIM_CLOUD_TOKEN=TOKEN, TPUSIM_CLOUD_ENDPOINT=s.url, TPUSIM_CLOUD_PROJECT="p")
    job = subprocess.Popen([s.tpusim, "cloud", "ssh", "job1", *ZONE, "--", "tpusim", "run", program,
                            "--checkpoint-dir", ck, "--output-dir", os.path.join(work, "o1"),
                            "--steps", "1000000000"] + common,
                           env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        wait_for("a checkpoint", lambda: os.path.exists(os.path.join(ck, "manifest.json")), 120)
        wait_for("the job's metrics", lambda: "tpusim_job_steps{" in s.call_text("/metrics"), 60)
        if 'tpusim_job_tensorcore_utilization{node="projects/p/locations/us-central2-b/nodes/job1"}' \
                not in s.call_text("/metrics"):
            fail("no utilization of the running job")
        s.cli("preempt", "job1", *ZONE)
        out, err = job.communicate(timeout=60)
    finally:
        if job.poll() is None:
            job.kill()
            job.wait()
    if job.returncode != 255 or "closed: the node is PREEMPTED" not in err:
        fail("ssh after preemption: exit %d, %s" % (job.returncode, err))
    with open(os.path.join(ck, "manifest.json")) as f:
        saved = json.load(f)["step"]
    if saved <= 0:
        fail("checkpoint at step %d" % saved)
    # What the killed job printed is kept, up to its checkpoint's step at least.
    if "\nstep %d: " % saved not in out:
        fail("the preempted job's output lacks step %d: %r" % (saved, out[-300:]))
    steps = ["--steps", str(saved + 12)]
    s.cli("tpus", "tpu-vm", "create", "job2", "--accelerator-type", "v4-8", "--version",
          "tpu-ubuntu2204-base", "--spot", *ZONE)
    done = s.cli("ssh", "job2", *ZONE, "--", "tpusim", "run", program, "--checkpoint-dir", ck,
                 "--output-dir", os.path.join(work, "o2"), *common, *steps)
    if "resumed from step %d" % saved not in done.stdout or "slice: v4-8" not in done.stdout:
        fail("resume: %s" % done.stdout[:500])
    # The same state as one uninterrupted run on the same slice.
    subprocess.run([s.tpusim, "run", program, "--slice", "v4-8", "--output-dir",
                    os.path.join(work, "o3"), "--checkpoint-dir", os.path.join(work, "ck3")] + common + steps,
                   check=True, capture_output=True)
    for i in range(3):
        a = open(os.path.join(work, "o2", "result%d.npy" % i), "rb").read()
        b = open(os.path.join(work, "o3", "result%d.npy" % i), "rb").read()
        if a != b:
            fail("result%d after resume differs from an uninterrupted run" % i)
    refused = s.cli("ssh", "job1", *ZONE, "--", "tpusim", "run", program, ok=False)
    if refused.returncode != 255 or "PREEMPTED" not in refused.stderr:
        fail("ssh to a preempted node: %s" % refused.stderr)
    if s.cli("ssh", "job2", *ZONE, "--", "ls", ok=False).returncode != 255:
        fail("ssh ran something other than tpusim")


def load_token(k):
    return "load-token-%04d-0123456789" % k


def test_load(s, calls, clients):
    """`calls` calls from `clients` threads, each with its own token, as
    separate users would: only errors the API defines. A 429 is retried after
    its Retry-After, as Google's clients do, so the host's speed decides
    nothing; the retries are counted."""
    latencies, unexpected, lock = [], [], threading.Lock()
    retried = [0]
    allowed = {200, 400, 404, 409}

    def call(k, method, path, body=None):
        for _ in range(10):
            status, reply, headers = s.request(method, path, body, token=load_token(k))
            if status != 429:
                break
            with lock:
                retried[0] += 1
            time.sleep(int(headers.get("Retry-After", "1")))
        return status, reply

    def client(k):
        rng = random.Random(k)
        mine = []
        for i in range(calls // clients):
            r = rng.random()
            t0 = time.perf_counter()
            if r < 0.15:
                name = "l%d-%d" % (k, i)
                status, body = call(k, "POST", NODES + "?nodeId=" + name,
                                    {"acceleratorType": "v4-8", "runtimeVersion": "tpu-ubuntu2204-base"})
                if status == 200:
                    mine.append(name)
            elif r < 0.25 and mine:
                status, body = call(k, "DELETE", NODES + "/" + mine.pop(rng.randrange(len(mine))))
            elif r < 0.55:
                status, body = call(k, "GET", NODES + "?pageSize=50")
            elif r < 0.7:
                status, body = call(k, "GET", "/v2/projects/p/locations/us-central2-b/operations?pageSize=20")
            else:
                status, body = call(k, "GET", NODES + "/" + (mine[-1] if mine else "missing"))
            dt = time.perf_counter() - t0
            with lock:
                latencies.append(dt)
                if status not in allowed:
                    unexpected.append((status, body))

    threads = [threading.Thread(target=client, args=(k,)) for k in range(clients)]
    t0 = time.perf_counter()
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    wall = time.perf_counter() - t0
    if unexpected:
        fail("load: %d unexpected responses, first %r" % (len(unexpected), unexpected[0]))
    latencies.sort()
    p = lambda q: latencies[min(len(latencies) - 1, int(q * len(latencies)))] * 1000
    print("load: %d calls from %d clients in %.1f s: p50 %.1f ms, p99 %.1f ms, %d retried after 429 "
          "(Python clients)" % (len(latencies), clients, wall, p(0.5), p(0.99), retried[0]))


def test_kill_loop(tpusim, work, cycles):
    """SIGKILL the server at random moments during creates and deletes: every
    acknowledged create is there afterwards, every acknowledged delete is
    DELETING or done, and no node is half-made."""
    # Capacity for more creates than any machine makes in the loop: a create
    # the zone has no room for is a failed operation, not a node.
    s = Server(tpusim, work, "kill", speed=20.0, v4=4000000)
    rng = random.Random(7)
    # Acknowledged creates and deletes, and every name a create or delete
    # was sent for (the server may have done those it died before answering).
    created, deleted, attempted, delete_sent = set(), set(), set(), set()
    lock = threading.Lock()
    stop = threading.Event()

    def worker(k, cycle):
        r = random.Random(cycle * 100 + k)
        i = 0
        while not stop.is_set():
            i += 1
            try:
                with lock:
                    live = sorted(created - deleted)
                if live and r.random() < 0.4:
                    name = r.choice(live)
                    with lock:
                        delete_sent.add(name)
                    status, _ = s.call("DELETE", NODES + "/" + name)
                    if status == 200:
                        with lock:
                            deleted.add(name)
                else:
                    name = "k%d-%d-%d" % (cycle, k, i)
                    with lock:
                        attempted.add(name)
                    status, op = s.call("POST", NODES + "?nodeId=" + name,
                                        {"acceleratorType": "v4-8", "runtimeVersion": "tpu-ubuntu2204-base"})
                    if status == 200 and "error" not in op:
                        with lock:
                            created.add(name)
            except (urllib.error.URLError, http.client.HTTPException, OSError):
                return  # the server died under this call: it was not acknowledged

    for cycle in range(cycles):
        stop.clear()
        threads = [threading.Thread(target=worker, args=(k, cycle)) for k in range(3)]
        for t in threads:
            t.start()
        time.sleep(rng.uniform(0.0, 0.06))
        s.kill()
        stop.set()
        for t in threads:
            t.join()
        s.start()
        check_consistent(s, created, deleted, attempted, delete_sent, cycle)
    s.stop()
    print("kill loop: %d SIGKILL/restart cycles, %d creates and %d deletes acknowledged, all kept"
          % (cycles, len(created), len(deleted)))


def check_consistent(s, created, deleted, attempted, delete_sent, cycle):
    present, token = {}, ""
    while True:
        status, page = s.call("GET", NODES + "?pageSize=500" + ("&pageToken=" + token if token else ""))
        if status != 200:
            fail("cycle %d: list: %d %r" % (cycle, status, page))
        for n in page.get("nodes", []):
            present[n["name"].rsplit("/", 1)[1]] = n
        token = page.get("nextPageToken", "")
        if not token:
            break
    for name in created - delete_sent:
        if name not in present:
            fail("cycle %d: acknowledged node %s lost" % (cycle, name))
    for name in deleted & set(present):
        if present[name]["state"] != "DELETING":
            fail("cycle %d: deleted node %s is %s" % (cycle, name, present[name]["state"]))
    for name, n in present.items():
        if name not in attempted:
            fail("cycle %d: node %s was never asked for" % (cycle, name))
        if n["state"] not in ("CREATING", "READY", "DELETING") or n["acceleratorType"] != "v4-8" or \
                n["acceleratorConfig"]["topology"] != "2x2x1":
            fail("cycle %d: half-made node %r" % (cycle, n))
        if n["state"] == "READY" and len(n.get("networkEndpoints", [])) != 1:
            fail("cycle %d: READY node without its endpoint %r" % (cycle, n))


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("tpusim")
    parser.add_argument("examples")
    parser.add_argument("--kill-cycles", type=int, default=200)
    parser.add_argument("--calls", type=int, default=10000)
    parser.add_argument("--clients", type=int, default=50)
    args = parser.parse_args()
    tpusim = os.path.abspath(args.tpusim)
    work = tempfile.mkdtemp(prefix="tpusim_cloud_")
    try:
        with open(os.path.join(work, "tokens"), "w") as f:
            f.write("# test tokens\n%s\nsecond-token-0123456789\n" % TOKEN)
            f.writelines(load_token(k) + "\n" for k in range(args.clients))
        s = Server(tpusim, work, "main")
        test_cli(s)
        test_guards(s)
        test_client_forms(s, tpusim, work)
        test_queue_and_preemption(s)
        test_ssh_resume(s, os.path.abspath(args.examples), work)
        test_load(s, args.calls, args.clients)
        s.stop()
        test_rate_limit(tpusim, work)
        test_default_world(tpusim, work)
        test_kill_loop(tpusim, work, args.kill_cycles)
    finally:
        for proc in Server.running:
            if proc.poll() is None:
                proc.kill()
                proc.wait()
        shutil.rmtree(work, ignore_errors=True)
    print("cloud_test: PASS")


if __name__ == "__main__":
    main()
