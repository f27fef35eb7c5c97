#!/usr/bin/python3
"""`tpusim cloud serve` driven by Google's own Cloud TPU clients, as their
users would drive Cloud TPU: the Node client @google-cloud/tpu
(tests/cloud_clients/node/scenario.js, pinned by its package-lock.json) and,
where tests/cloud_clients/python_scenario.py is present, the Python one.

usage: cloud_clients_test.py TPUSIM REPO_ROOT

Each scenario gets a server of its own on a new state file, with the world of
examples/cloud/capacity.toml, and prints one line per step. The test fails if
any step of any scenario fails. The Node client is installed by
`npm ci --prefix tests/cloud_clients/node` (scripts/test.sh does it).
"""
import os
import shutil
import signal
import subprocess
import sys
import tempfile
import threading
import time

TOKEN = "clients-test-token-0123456789abcdef"
ZONE = "us-east5-a"
PROJECT = "my-project"
SCENARIO_SECONDS = 420  # real seconds one scenario may take
servers = []  # every server started, so that main() stops them all


def log(message):
    print("cloud_clients_test: " + message, flush=True)


def die_with_parent():
    """Runs in a child before exec: SIGTERM it when this test dies, even by
    SIGKILL (a ctest timeout), so that no server outlives the test."""
    try:
        import ctypes
        ctypes.CDLL("libc.so.6", use_errno=True).prctl(1, signal.SIGTERM)  # PR_SET_PDEATHSIG
    except OSError:
        pass


def read(path):
    """A file's text, stripped; empty if it is not there."""
    try:
        with open(path, errors="replace") as f:
            return f.read().strip()
    except FileNotFoundError:
        return ""


def copy_lines(stream):
    for line in iter(stream.readline, b""):
        sys.stdout.write(line.decode("utf-8", "replace"))
        sys.stdout.flush()


def start_server(tpusim, repo, work):
    """A server on a free port: (process, URL, token file, log path)."""
    tokens = os.path.join(work, "tokens")
    with open(tokens, "w") as f:
        f.write("# cloud_clients_test\n%s\n" % TOKEN)
    port_file = os.path.join(work, "port")
    log_path = os.path.join(work, "server.log")
    with open(log_path, "wb") as server_log:
        proc = subprocess.Popen(
            [tpusim, "cloud", "serve", "--db", os.path.join(work, "state.sqlite"),
             "--port", "0", "--port-file", port_file, "--tokens", tokens,
             "--capacity", os.path.join(repo, "examples", "cloud", "capacity.toml")],
            stdin=subprocess.DEVNULL, stdout=server_log, stderr=subprocess.STDOUT,
            preexec_fn=die_with_parent)
    servers.append(proc)
    deadline = time.time() + 30
    while not read(port_file):
        if proc.poll() is not None:
            raise RuntimeError("the server exited with %d before listening:\n%s"
                               % (proc.returncode, read(log_path)))
        if time.time() > deadline:
            raise RuntimeError("the server wrote no port file in 30 s:\n" + read(log_path))
        time.sleep(0.01)
    return proc, "http://127.0.0.1:" + read(port_file), tokens, log_path


def stop_server(proc):
    if proc.poll() is None:
        proc.terminate()
        try:
            proc.wait(timeout=15)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()


def run_scenario(name, command, tpusim, repo, work_root):
    """Runs one scenario against a fresh server; True if every step passed."""
    work = os.path.join(work_root, name)
    os.mkdir(work)
    proc, url, tokens, server_log = start_server(tpusim, repo, work)
    client = None
    try:
        argv = command + ["--endpoint", url, "--token-file", tokens,
                          "--zone", ZONE, "--project", PROJECT]
        log("%s: %s" % (name, " ".join(argv)))
        client = subprocess.Popen(argv, cwd=work, stdin=subprocess.DEVNULL,
                                  stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                                  start_new_session=True, preexec_fn=die_with_parent)
        # Its lines are printed as they come, so a killed test shows how far it got.
        copier = threading.Thread(target=copy_lines, args=(client.stdout,), daemon=True)
        copier.start()
        try:
            client.wait(timeout=SCENARIO_SECONDS)
            timed_out = False
        except subprocess.TimeoutExpired:
            os.killpg(client.pid, signal.SIGKILL)
            client.wait()
            timed_out = True
        copier.join(timeout=10)
        if timed_out:
            log("%s: FAIL: no end after %d s" % (name, SCENARIO_SECONDS))
        elif client.returncode != 0:
            log("%s: FAIL: exit status %d" % (name, client.returncode))
        else:
            log("%s: PASS" % name)
        ok = not timed_out and client.returncode == 0
    finally:
        if client is not None and client.poll() is None:
            os.killpg(client.pid, signal.SIGKILL)
            client.wait()
        stop_server(proc)
    tail = read(server_log).splitlines()[-20:]
    if not ok and tail:
        log("%s: the server's log ends:" % name)
        print("\n".join(tail))
    return ok


def main():
    if len(sys.argv) != 3:
        sys.exit("usage: cloud_clients_test.py TPUSIM REPO_ROOT")
    tpusim = os.path.abspath(sys.argv[1])
    repo = os.path.abspath(sys.argv[2])
    clients = os.path.join(repo, "tests", "cloud_clients")
    node_dir = os.path.join(clients, "node")

    # ctest's timeout and ^C end the test through the finally block below.
    for sig in (signal.SIGTERM, signal.SIGINT, signal.SIGHUP):
        signal.signal(sig, lambda signum, frame: sys.exit("cloud_clients_test: killed by signal %d" % signum))

    scenarios = []
    problems = []
    node = shutil.which("node")
    if not node:
        problems.append("node: Node.js is not installed (it is needed for the Node client)")
    elif not os.path.isdir(os.path.join(node_dir, "node_modules", "@google-cloud", "tpu")):
        problems.append("node: the Node client is not installed; run "
                        "`npm ci --prefix tests/cloud_clients/node` in %s" % repo)
    else:
        scenarios.append(("node", [node, os.path.join(node_dir, "scenario.js")]))
    python_scenario = os.path.join(clients, "python_scenario.py")
    if os.path.exists(python_scenario):
        scenarios.append(("python", ["/usr/bin/python3", python_scenario]))

    results = {}
    work_root = tempfile.mkdtemp(prefix="tpusim_cloud_clients_")
    try:
        for name, command in scenarios:
            try:
                results[name] = run_scenario(name, command, tpusim, repo, work_root)
            except (OSError, RuntimeError, subprocess.SubprocessError) as e:
                log("%s: FAIL: %s" % (name, e))
                results[name] = False
    finally:
        for proc in servers:
            stop_server(proc)
        shutil.rmtree(work_root, ignore_errors=True)

    for problem in problems:
        log("FAIL: " + problem)
    failed = [name for name, ok in results.items() if not ok]
    summary = ", ".join("%s %s" % (name, "PASS" if ok else "FAIL") for name, ok in results.items())
    log("%s" % (summary or "no scenario ran"))
    if failed or problems or not results:
        sys.exit(1)
    log("PASS")


if __name__ == "__main__":
    main()
