'use strict';
// Drives a Cloud TPU v2 endpoint (`tpusim cloud serve`) with Google's own Node
// client, @google-cloud/tpu 3.8.1 on google-gax 4 in its REST transport
// (HTTP/1.1 + JSON), as a user of Cloud TPU would, and checks what comes back.
//
//   node scenario.js --endpoint http://127.0.0.1:8470 --token-file TOKEN \
//       --zone us-east5-a --project my-project
//
// --endpoint is a URL or a bare host (then --port, default 8470, and http).
// Each step prints `ok NAME` or `FAIL NAME: message`; the run goes on after a
// failure, ends with `N of M steps passed` and exits 1 if any step failed.
// The sizes assume the world of examples/cloud/capacity.toml and a fresh
// state: us-east5-a has 8960 v5p chips (2048 per project) and 1024 v6e chips.

const fs = require('fs');
const {v2, protos} = require('@google-cloud/tpu');
const {OAuth2Client} = require('google-auth-library');

const tpu = protos.google.cloud.tpu.v2;
const STEP_TIMEOUT_MS = 90 * 1000;
const RUNTIME = 'v2-alpha-tpuv5';

// ---------------------------------------------------------------- arguments

function parseArgs(argv) {
  const args = {port: undefined, zone: 'us-east5-a', project: 'my-project'};
  for (let i = 0; i < argv.length; i += 2) {
    const key = argv[i].replace(/^--/, '').replace(/-([a-z])/g, (_, c) => c.toUpperCase());
    if (!['endpoint', 'port', 'tokenFile', 'zone', 'project'].includes(key) || i + 1 >= argv.length) {
      throw new Error(`usage: node scenario.js --endpoint URL|HOST [--port P] --token-file F ` +
                      `[--zone Z] [--project P] (bad argument ${argv[i]})`);
    }
    args[key] = argv[i + 1];
  }
  if (!args.endpoint || !args.tokenFile) throw new Error('--endpoint and --token-file are required');
  const url = new URL(/^[a-z]+:\/\//.test(args.endpoint) ? args.endpoint : `http://${args.endpoint}`);
  args.protocol = url.protocol.replace(':', '');
  args.host = url.hostname;
  args.port = Number(args.port || url.port || 8470);
  // The token file may hold several tokens (tpusim's --tokens format); use the first.
  args.token = fs.readFileSync(args.tokenFile, 'utf8').split('\n')
      .map(l => l.trim()).find(l => l && !l.startsWith('#'));
  if (!args.token) throw new Error(`no token in ${args.tokenFile}`);
  return args;
}

// A client as a user makes one for a private endpoint: REST transport, the
// endpoint and port, and an OAuth2 client holding a bearer token.
function makeClient(args, token) {
  const authClient = new OAuth2Client();
  authClient.setCredentials({access_token: token});
  return new v2.TpuClient({
    fallback: 'rest',
    protocol: args.protocol,
    apiEndpoint: args.host,
    port: args.port,
    authClient,
  });
}

// ---------------------------------------------------------------- checks

function check(cond, message) {
  if (!cond) throw new Error(message);
}

// JSON with object keys sorted: maps (labels) compare whatever their order.
function canonical(value) {
  return JSON.stringify(JSON.parse(JSON.stringify(value === undefined ? null : value)), (key, v) =>
    v && typeof v === 'object' && !Array.isArray(v)
      ? Object.fromEntries(Object.keys(v).sort().map(k => [k, v[k]])) : v);
}

function eq(actual, expected, what) {
  const a = canonical(actual);
  const e = canonical(expected);
  if (a !== e) throw new Error(`${what}: got ${a}, expected ${e}`);
}

// Enum fields are strings in plain responses and numbers in the messages a
// long-running operation decodes; name them either way.
function enumName(enumType, value) {
  return typeof value === 'number' ? enumType[value] : value;
}

const nodeState = node => enumName(tpu.Node.State, node.state);
const queuedState = qr => enumName(tpu.QueuedResourceState.State, qr.state && qr.state.state);

// The status each error must surface with, as this client reports it. Over
// REST, google-gax sets error.code from the HTTP status (HttpCodeToRpcCodeMap
// in google-gax/build/src/status.js) and drops the JSON "status" string, so
// with Google's HTTP mapping ALREADY_EXISTS (409) reads as ABORTED (10) and
// FAILED_PRECONDITION (400) as INVALID_ARGUMENT (3). A failed long-running
// operation keeps its own code (Operation.error.code), so there the gRPC code
// itself is expected.
const STATUS = {
  INVALID_ARGUMENT: {grpc: 3, http: 400},
  NOT_FOUND: {grpc: 5, http: 404},
  ALREADY_EXISTS: {grpc: 6, http: 409},
  RESOURCE_EXHAUSTED: {grpc: 8, http: 429},
  FAILED_PRECONDITION: {grpc: 9, http: 400},
  UNAUTHENTICATED: {grpc: 16, http: 401},
};
const HTTP_TO_CLIENT_CODE = {400: 3, 401: 16, 403: 7, 404: 5, 409: 10, 429: 8};

// Runs `call` (which may return [operation, ...] of a long-running method),
// awaits the operation if there is one, and checks that it fails with `status`.
async function expectError(status, call) {
  const want = STATUS[status];
  let where = 'the call';
  try {
    const result = await call();
    if (Array.isArray(result) && result[0] && typeof result[0].promise === 'function') {
      where = `operation ${result[0].name}`;
      await result[0].promise();
    }
  } catch (err) {
    const expected = where === 'the call' ? HTTP_TO_CLIENT_CODE[want.http] : want.grpc;
    if (err.code !== expected) {
      throw new Error(`${where} failed with code ${err.code} (${err.message}); expected ${expected} ` +
                      `(${status}${where === 'the call' ? `, HTTP ${want.http}` : ''})`);
    }
    check(err.message && err.message.length > 0, `${status} error has no message`);
    return err;
  }
  throw new Error(`${where} succeeded; expected ${status}`);
}

// ---------------------------------------------------------------- the scenario

class Scenario {
  constructor(args) {
    this.args = args;
    this.client = makeClient(args, args.token);
    this.project = args.project;
    this.zone = args.zone;
    this.parent = `projects/${args.project}/locations/${args.zone}`;
    this.nodeA = `${this.parent}/nodes/node-a`;
    this.nodeB = `${this.parent}/nodes/node-b`;
    this.started = [];  // [method, operation name] of each long-running call acknowledged
  }

  newNode(acceleratorType, extra = {}) {
    return {acceleratorType, runtimeVersion: RUNTIME, ...extra};
  }

  // Starts a long-running method and waits for it as users do: await promise().
  async lro(method, request) {
    const [operation] = await this.client[method](request);
    this.started.push([method, operation.name]);
    check(operation.name && operation.name.startsWith(`${this.parent}/operations/`),
          `${method}: operation name ${JSON.stringify(operation.name)} is not under ${this.parent}/operations/`);
    const [result, metadata, raw] = await operation.promise();
    check(raw && raw.done === true, `${method}: operation ${operation.name} resolved but is not done`);
    return {operation, result, metadata};
  }

  // ---- catalog

  async listAcceleratorTypesPaged() {
    const pageSize = 5;
    let request = {parent: this.parent, pageSize};
    const seen = [];
    let pages = 0;
    while (request) {
      const [types, next] = await this.client.listAcceleratorTypes(request, {autoPaginate: false});
      pages++;
      check(types.length >= 1 && types.length <= pageSize,
            `page ${pages} has ${types.length} accelerator types for pageSize ${pageSize}`);
      seen.push(...types.map(t => t.type));
      request = next;
      check(pages <= 100, 'more than 100 pages');
    }
    check(pages >= 2, `pageSize ${pageSize} gave ${pages} page(s) for ${seen.length} accelerator types`);
    eq(new Set(seen).size, seen.length, 'distinct accelerator types over the pages');
    for (const t of ['v5p-8', 'v5p-128', 'v6e-256']) check(seen.includes(t), `${t} not listed in ${this.zone}`);
    check(!seen.some(t => t.startsWith('v4-')), `v4 listed in ${this.zone}, which has none`);
    // The async iterator pages through the same list.
    const all = [];
    for await (const t of this.client.listAcceleratorTypesAsync({parent: this.parent, pageSize})) {
      eq(t.name, `${this.parent}/acceleratorTypes/${t.type}`, 'accelerator type name');
      all.push(t.type);
    }
    eq(all, seen, 'types from listAcceleratorTypesAsync');
  }

  async getAcceleratorType() {
    const [t] = await this.client.getAcceleratorType({name: `${this.parent}/acceleratorTypes/v5p-8`});
    eq(t.name, `${this.parent}/acceleratorTypes/v5p-8`, 'name');
    eq(t.type, 'v5p-8', 'type');
    eq(t.acceleratorConfigs.map(c => [c.type, c.topology]), [['V5P', '2x2x1']], 'acceleratorConfigs');
  }

  async listRuntimeVersions() {
    const versions = [];
    for await (const v of this.client.listRuntimeVersionsAsync({parent: this.parent})) {
      eq(v.name, `${this.parent}/runtimeVersions/${v.version}`, 'runtime version name');
      versions.push(v.version);
    }
    check(versions.includes(RUNTIME), `${RUNTIME} not among ${JSON.stringify(versions)}`);
  }

  async getRuntimeVersion() {
    const [v] = await this.client.getRuntimeVersion({name: `${this.parent}/runtimeVersions/${RUNTIME}`});
    eq([v.name, v.version], [`${this.parent}/runtimeVersions/${RUNTIME}`, RUNTIME], 'name, version');
  }

  // ---- locations (the google.cloud.location mixin)

  async listLocations() {
    const ids = [];
    for await (const loc of this.client.listLocationsAsync({name: `projects/${this.project}`})) {
      eq(loc.name, `projects/${this.project}/locations/${loc.locationId}`, 'location name');
      ids.push(loc.locationId);
    }
    eq(ids.slice().sort(), ['us-central2-b', 'us-east5-a'], 'location ids');
  }

  async getLocation() {
    const [loc] = await this.client.getLocation({name: this.parent});
    eq([loc.name, loc.locationId], [this.parent, this.zone], 'name, locationId');
  }

  // ---- nodes

  async createNodeA() {
    const {result, metadata} = await this.lro('createNode', {
      parent: this.parent,
      nodeId: 'node-a',
      node: this.newNode('v5p-8', {description: 'node a', labels: {team: 'sim'}}),
    });
    eq(result.name, this.nodeA, 'created node name');
    eq(nodeState(result), 'READY', 'created node state');
    eq([result.acceleratorType, result.runtimeVersion], ['v5p-8', RUNTIME], 'acceleratorType, runtimeVersion');
    check(metadata, 'operation has no OperationMetadata');
    eq(metadata.target, this.nodeA, 'OperationMetadata.target');
  }

  // A second node, with a network config, for the list.
  async createNodeB() {
    const {result} = await this.lro('createNode', {
      parent: this.parent,
      nodeId: 'node-b',
      node: this.newNode('v5p-16', {networkConfig: {network: 'default', enableExternalIps: true}}),
    });
    eq([result.name, nodeState(result), result.acceleratorType], [this.nodeB, 'READY', 'v5p-16'],
       'created node name, state, acceleratorType');
    eq(result.networkConfig && [result.networkConfig.network, result.networkConfig.enableExternalIps],
       ['default', true], 'networkConfig network, enableExternalIps');
  }

  // The shape given as acceleratorConfig {type, topology} instead of a type
  // name; the node is deleted again.
  async createWithAcceleratorConfig() {
    const name = `${this.parent}/nodes/node-c`;
    const {result} = await this.lro('createNode', {
      parent: this.parent,
      nodeId: 'node-c',
      node: {runtimeVersion: RUNTIME, acceleratorConfig: {type: 'V5P', topology: '2x2x1'}},
    });
    eq([result.name, nodeState(result)], [name, 'READY'], 'created node name, state');
    eq(enumName(tpu.AcceleratorConfig.Type, result.acceleratorConfig && result.acceleratorConfig.type), 'V5P',
       'acceleratorConfig.type');
    eq(result.acceleratorConfig.topology, '2x2x1', 'acceleratorConfig.topology');
    const [node] = await this.client.getNode({name});
    eq([node.acceleratorType, node.acceleratorConfig.type, node.acceleratorConfig.topology],
       ['v5p-8', 'V5P', '2x2x1'], 'acceleratorType, acceleratorConfig read back');
    await this.lro('deleteNode', {name});
  }

  async getNode() {
    const [node] = await this.client.getNode({name: this.nodeA});
    eq(node.name, this.nodeA, 'name');
    eq(node.state, 'READY', 'state');
    eq([node.acceleratorType, node.runtimeVersion], ['v5p-8', RUNTIME], 'acceleratorType, runtimeVersion');
    eq(node.labels, {team: 'sim'}, 'labels');
    eq(node.description, 'node a', 'description');
    // v5p-8: 4 chips, one host.
    eq(node.networkEndpoints.length, 1, 'number of networkEndpoints');
    check(node.networkEndpoints[0].ipAddress, 'networkEndpoints[0] has no ipAddress');
    check(node.createTime && Number(node.createTime.seconds) > 0, 'no createTime');
  }

  async listNodesPaged() {
    let request = {parent: this.parent, pageSize: 1};
    const names = [];
    while (request) {
      const [nodes, next] = await this.client.listNodes(request, {autoPaginate: false});
      eq(nodes.length, 1, `nodes on page ${names.length + 1} of pageSize 1`);
      names.push(...nodes.map(n => n.name));
      request = next;
      check(names.length <= 50, 'more than 50 pages of one node');
    }
    eq(new Set(names).size, names.length, `distinct nodes over the pages (${names})`);
    for (const n of [this.nodeA, this.nodeB]) check(names.includes(n), `${n} not listed`);
    const all = [];
    for await (const n of this.client.listNodesAsync({parent: this.parent, pageSize: 1})) all.push(n.name);
    eq(all, names, 'nodes from listNodesAsync');
  }

  async stopNode() {
    const {result} = await this.lro('stopNode', {name: this.nodeA});
    eq([result.name, nodeState(result)], [this.nodeA, 'STOPPED'], 'stopped node name, state');
    const [node] = await this.client.getNode({name: this.nodeA});
    eq(node.state, 'STOPPED', 'state read back');
  }

  async stopStoppedNode() {
    await expectError('FAILED_PRECONDITION', () => this.client.stopNode({name: this.nodeA}));
  }

  async startNode() {
    const {result} = await this.lro('startNode', {name: this.nodeA});
    eq([result.name, nodeState(result)], [this.nodeA, 'READY'], 'started node name, state');
    const [node] = await this.client.getNode({name: this.nodeA});
    eq(node.state, 'READY', 'state read back');
  }

  async updateNode() {
    const labels = {team: 'sim', stage: 'test'};
    const {result} = await this.lro('updateNode', {
      node: {name: this.nodeA, description: 'node a, updated', labels},
      updateMask: {paths: ['description', 'labels']},
    });
    eq([result.name, result.description], [this.nodeA, 'node a, updated'], 'updated node name, description');
    const [node] = await this.client.getNode({name: this.nodeA});
    eq([node.description, node.labels, node.state], ['node a, updated', labels, 'READY'],
       'description, labels, state read back');
    eq([node.acceleratorType, node.runtimeVersion], ['v5p-8', RUNTIME], 'fields outside the mask');
  }

  async getGuestAttributes() {
    // One GuestAttributes per worker: v5p-8 has one.
    const [response] = await this.client.getGuestAttributes({name: this.nodeA, queryPath: ''});
    eq(response.guestAttributes.length, 1, 'number of guestAttributes (workers)');
    const items = response.guestAttributes[0].queryValue && response.guestAttributes[0].queryValue.items;
    check(items && items.length > 0, `no guest attribute items: ${JSON.stringify(response.guestAttributes[0])}`);
    check(items.every(i => i.namespace && i.key), `items without namespace or key: ${JSON.stringify(items)}`);
    await expectError('NOT_FOUND', () =>
      this.client.getGuestAttributes({name: `${this.parent}/nodes/no-such-node`}));
  }

  async deleteNode() {
    const {result} = await this.lro('deleteNode', {name: this.nodeB});
    eq(result, {}, 'deleteNode result (google.protobuf.Empty)');
    await expectError('NOT_FOUND', () => this.client.getNode({name: this.nodeB}));
    const left = [];
    for await (const n of this.client.listNodesAsync({parent: this.parent})) left.push(n.name);
    eq(left, [this.nodeA], 'nodes left');
  }

  // ---- operations (the google.longrunning mixin)

  async listOperations() {
    const ops = [];
    for await (const op of this.client.listOperationsAsync({name: this.parent})) ops.push(op);
    for (const op of ops) {
      check(op.name.startsWith(`${this.parent}/operations/`), `operation name ${op.name}`);
    }
    const listed = new Set(ops.map(op => op.name));
    const missing = this.started.filter(([, name]) => !listed.has(name)).map(([, name]) => name);
    check(missing.length === 0, `${ops.length} operations listed; not among them: ${missing}`);
    check(ops.every(op => op.done), `operations not done: ${ops.filter(op => !op.done).map(op => op.name)}`);
  }

  async getOperation() {
    const started = this.started.find(([method]) => method === 'createNode');
    check(started, 'no createNode operation was started');
    const name = started[1];
    const [op] = await this.client.getOperation({name});
    eq([op.name, op.done], [name, true], 'name, done');
    check(op.response, 'done operation has no response');
    eq(op.response.type_url, 'type.googleapis.com/google.cloud.tpu.v2.Node', 'response type');
    // The generated helper decodes the same operation into the Node.
    const checked = await this.client.checkCreateNodeProgress(name);
    check(checked.done, 'checkCreateNodeProgress: not done');
    eq(checked.result && checked.result.name, this.nodeA, 'checkCreateNodeProgress result name');
  }

  // ---- queued resources

  queuedResource(id, nodeType, tier) {
    return {
      tpu: {nodeSpec: [{parent: this.parent, nodeId: `${id}-node`, node: this.newNode(nodeType)}]},
      ...tier,
      queueingPolicy: {validUntilDuration: {seconds: 6 * 3600}},
    };
  }

  async createQueued(id, nodeType, tier) {
    const {result} = await this.lro('createQueuedResource', {
      parent: this.parent,
      queuedResourceId: id,
      queuedResource: this.queuedResource(id, nodeType, tier),
    });
    eq(result.name, `${this.parent}/queuedResources/${id}`, 'queued resource name');
    eq(result.tpu.nodeSpec.map(s => [s.parent, s.nodeId, s.node.acceleratorType]),
       [[this.parent, `${id}-node`, nodeType]], 'tpu.nodeSpec');
    return result;
  }

  async createQueuedSpot() {
    const qr = await this.createQueued('qr-spot', 'v5p-8', {spot: {}});
    check(qr.spot && !qr.guaranteed, `tier: spot ${JSON.stringify(qr.spot)}, guaranteed ${JSON.stringify(qr.guaranteed)}`);
  }

  async createQueuedGuaranteed() {
    const qr = await this.createQueued('qr-guaranteed', 'v5p-16', {guaranteed: {}});
    check(qr.guaranteed && !qr.spot, `tier: guaranteed ${JSON.stringify(qr.guaranteed)}, spot ${JSON.stringify(qr.spot)}`);
  }

  async getQueued() {
    const name = `${this.parent}/queuedResources/qr-spot`;
    const [qr] = await this.client.getQueuedResource({name});
    eq(qr.name, name, 'name');
    check(qr.spot, 'spot tier lost');
    eq(qr.tpu.nodeSpec[0].node.acceleratorType, 'v5p-8', 'nodeSpec[0].node.acceleratorType');
    eq(qr.tpu.nodeSpec[0].node.runtimeVersion, RUNTIME, 'nodeSpec[0].node.runtimeVersion');
    const states = ['ACCEPTED', 'WAITING_FOR_RESOURCES', 'PROVISIONING', 'ACTIVE', 'SUSPENDING', 'SUSPENDED'];
    check(states.includes(queuedState(qr)), `state ${JSON.stringify(qr.state)}`);
    eq(qr.queueingPolicy && qr.queueingPolicy.validUntilDuration &&
       Number(qr.queueingPolicy.validUntilDuration.seconds), 6 * 3600, 'queueingPolicy.validUntilDuration');
  }

  async listQueued() {
    const names = [];
    for await (const qr of this.client.listQueuedResourcesAsync({parent: this.parent, pageSize: 1})) {
      names.push(qr.name);
    }
    eq(names.slice().sort(), ['qr-guaranteed', 'qr-spot'].map(id => `${this.parent}/queuedResources/${id}`),
       'queued resources');
  }

  // A queued resource has no operation for its provisioning: poll it, as
  // `gcloud ... queued-resources describe` in a loop does.
  async waitGuaranteedActive() {
    const name = `${this.parent}/queuedResources/qr-guaranteed`;
    const deadline = Date.now() + 60 * 1000;
    let qr;
    for (;;) {
      [qr] = await this.client.getQueuedResource({name});
      if (queuedState(qr) === 'ACTIVE') break;
      check(['ACCEPTED', 'WAITING_FOR_RESOURCES', 'PROVISIONING', 'CREATING'].includes(queuedState(qr)),
            `state ${JSON.stringify(qr.state)}`);
      check(Date.now() < deadline, `still ${queuedState(qr)} after 60 s`);
      await new Promise(r => setTimeout(r, 500));
    }
    const [node] = await this.client.getNode({name: `${this.parent}/nodes/qr-guaranteed-node`});
    eq([node.state, node.acceleratorType, node.queuedResource], ['READY', 'v5p-16', name],
       'its node: state, acceleratorType, queuedResource');
  }

  async deleteQueuedWithNodes() {
    await expectError('FAILED_PRECONDITION', () =>
      this.client.deleteQueuedResource({name: `${this.parent}/queuedResources/qr-guaranteed`}));
  }

  async deleteQueued(id) {
    const name = `${this.parent}/queuedResources/${id}`;
    const {result} = await this.lro('deleteQueuedResource', {name, force: true});
    eq(result, {}, 'deleteQueuedResource result (google.protobuf.Empty)');
    await expectError('NOT_FOUND', () => this.client.getQueuedResource({name}));
    await expectError('NOT_FOUND', () => this.client.getNode({name: `${this.parent}/nodes/${id}-node`}));
  }

  // ---- errors

  async getMissingNode() {
    await expectError('NOT_FOUND', () => this.client.getNode({name: `${this.parent}/nodes/no-such-node`}));
  }

  async createExistingNode() {
    await expectError('ALREADY_EXISTS', () => this.client.createNode({
      parent: this.parent, nodeId: 'node-a', node: this.newNode('v5p-8')}));
  }

  async createInvalidNodeId() {
    await expectError('INVALID_ARGUMENT', () => this.client.createNode({
      parent: this.parent, nodeId: 'Node_With_Caps', node: this.newNode('v5p-8')}));
  }

  async createBadAcceleratorType() {
    await expectError('INVALID_ARGUMENT', () => this.client.createNode({
      parent: this.parent, nodeId: 'bad-type', node: this.newNode('v5p-7')}));
  }

  // 4096 chips where the project may hold 2048 v5p chips.
  async createOverQuota() {
    await expectError('RESOURCE_EXHAUSTED', () => this.client.createNode({
      parent: this.parent, nodeId: 'too-big', node: this.newNode('v5p-8192')}));
  }

  // The zone's 1024 v6e chips (no quota on v6e) taken by four v6e-256, a
  // fifth create fails its operation with RESOURCE_EXHAUSTED.
  async createOverCapacity() {
    const fillers = ['fill-1', 'fill-2', 'fill-3', 'fill-4'];
    const created = await Promise.all(fillers.map(id => this.lro('createNode', {
      parent: this.parent, nodeId: id, node: this.newNode('v6e-256', {runtimeVersion: 'v2-alpha-tpuv6e'})})));
    created.forEach(({result}, i) => eq([result.name, nodeState(result)],
                                        [`${this.parent}/nodes/${fillers[i]}`, 'READY'], 'filler node'));
    await expectError('RESOURCE_EXHAUSTED', () => this.client.createNode({
      parent: this.parent, nodeId: 'fill-5', node: this.newNode('v6e-256', {runtimeVersion: 'v2-alpha-tpuv6e'})}));
    await expectError('NOT_FOUND', () => this.client.getNode({name: `${this.parent}/nodes/fill-5`}));
    await Promise.all(fillers.map(id => this.lro('deleteNode', {name: `${this.parent}/nodes/${id}`})));
  }

  async wrongToken() {
    const stranger = makeClient(this.args, 'not-a-token-of-this-server-0123456789');
    await expectError('UNAUTHENTICATED', () => stranger.listNodes({parent: this.parent}));
    await expectError('UNAUTHENTICATED', () => stranger.getNode({name: this.nodeA}));
  }

  steps() {
    return [
      ['catalog/list-accelerator-types-paged', () => this.listAcceleratorTypesPaged()],
      ['catalog/get-accelerator-type', () => this.getAcceleratorType()],
      ['catalog/list-runtime-versions', () => this.listRuntimeVersions()],
      ['catalog/get-runtime-version', () => this.getRuntimeVersion()],
      ['locations/list-locations', () => this.listLocations()],
      ['locations/get-location', () => this.getLocation()],
      ['nodes/create-node-a', () => this.createNodeA()],
      ['nodes/create-node-b', () => this.createNodeB()],
      ['nodes/create-node-accelerator-config', () => this.createWithAcceleratorConfig()],
      ['nodes/get-node', () => this.getNode()],
      ['nodes/list-nodes-page-size-1', () => this.listNodesPaged()],
      ['nodes/stop-node', () => this.stopNode()],
      ['errors/stop-stopped-node-failed-precondition', () => this.stopStoppedNode()],
      ['nodes/start-node', () => this.startNode()],
      ['nodes/update-node-description-labels', () => this.updateNode()],
      ['nodes/get-guest-attributes', () => this.getGuestAttributes()],
      ['errors/create-existing-node-already-exists', () => this.createExistingNode()],
      ['operations/list-operations', () => this.listOperations()],
      ['operations/get-operation', () => this.getOperation()],
      ['nodes/delete-node', () => this.deleteNode()],
      ['errors/get-missing-node-not-found', () => this.getMissingNode()],
      ['errors/invalid-node-id-invalid-argument', () => this.createInvalidNodeId()],
      ['errors/bad-accelerator-type-invalid-argument', () => this.createBadAcceleratorType()],
      ['errors/over-quota-resource-exhausted', () => this.createOverQuota()],
      ['errors/over-capacity-resource-exhausted', () => this.createOverCapacity()],
      ['errors/wrong-token-unauthenticated', () => this.wrongToken()],
      ['queued/create-spot', () => this.createQueuedSpot()],
      ['queued/create-guaranteed', () => this.createQueuedGuaranteed()],
      ['queued/get-queued-resource', () => this.getQueued()],
      ['queued/list-queued-resources', () => this.listQueued()],
      ['queued/wait-guaranteed-active', () => this.waitGuaranteedActive()],
      ['errors/delete-queued-with-nodes-failed-precondition', () => this.deleteQueuedWithNodes()],
      ['queued/delete-spot-force', () => this.deleteQueued('qr-spot')],
      ['queued/delete-guaranteed-force', () => this.deleteQueued('qr-guaranteed')],
    ];
  }
}

function oneLine(err) {
  const text = err && err.message ? err.message : String(err);
  const code = err && err.code !== undefined && !/code \d+/.test(text) ? ` [code ${err.code}]` : '';
  return (text + code).replace(/\s*\n\s*/g, ' | ');
}

function withTimeout(promise, ms) {
  let timer;
  const timeout = new Promise((_, reject) => {
    timer = setTimeout(() => reject(new Error(`timed out after ${ms / 1000} s`)), ms);
  });
  return Promise.race([promise, timeout]).finally(() => clearTimeout(timer));
}

async function main() {
  let args;
  try {
    args = parseArgs(process.argv.slice(2));
  } catch (err) {
    console.error(err.message);
    return 2;
  }
  const scenario = new Scenario(args);
  const steps = scenario.steps();
  let passed = 0;
  for (const [name, run] of steps) {
    try {
      await withTimeout(Promise.resolve().then(run), STEP_TIMEOUT_MS);
      console.log(`ok ${name}`);
      passed++;
    } catch (err) {
      console.log(`FAIL ${name}: ${oneLine(err)}`);
    }
  }
  console.log(`${passed} of ${steps.length} steps passed`);
  return passed === steps.length ? 0 : 1;
}

// Exit explicitly: an operation still polling after a timed-out step must not
// keep the process alive.
main().then(code => process.exit(code), err => {
  console.error(err && err.stack ? err.stack : err);
  process.exit(1);
});
