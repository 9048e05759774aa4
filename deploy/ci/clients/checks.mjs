// Shared checks for the real-client tests: each SDK's test file connects
// its own Client over stdio (spawning `notebridge mcp stdio`) and over
// Streamable HTTP (`notebridge mcp serve`), then runs these checks through
// the SDK's own callTool, which validates structuredContent against the
// tool's outputSchema. deploy/ci/real-clients.sh sets the environment.
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { after, before, describe, test } from 'node:test';

/** Reads a required environment variable. */
export function env(name) {
  const v = process.env[name];
  if (!v) throw new Error(`${name} is not set (run deploy/ci/real-clients.sh)`);
  return v;
}

/** Arguments of `notebridge mcp stdio` against the fake Joplin, plus extra. */
export function stdioServer(...extra) {
  return {
    command: env('CLIENTS_BIN'),
    args: ['mcp', 'stdio', '--joplin-url', env('CLIENTS_JOPLIN_URL'),
      '--joplin-token-file', env('CLIENTS_JOPLIN_TOKEN_FILE'), '--joplin-wait', '2s', ...extra],
    env: { HOME: env('CLIENTS_HOME') },
    stderr: 'inherit',
  };
}

/** URL and bearer header of the running `notebridge mcp serve`. */
export function httpServer() {
  const token = readFileSync(env('CLIENTS_MCP_TOKEN_FILE'), 'utf8').trim();
  return { url: new URL(env('CLIENTS_MCP_URL')), headers: { Authorization: `Bearer ${token}` } };
}

/**
 * The error object an agent reads from an isError tool result: the JSON in
 * its text block, {"error": {code, message, retryable, details}}.
 */
function toolError(result) {
  assert.equal(result.isError, true, `expected an error result: ${JSON.stringify(result)}`);
  assert.equal(result.content.length, 1);
  assert.equal(result.content[0].type, 'text');
  const body = JSON.parse(result.content[0].text);
  assert.equal(typeof body.error, 'object', `no error object: ${result.content[0].text}`);
  const e = body.error;
  assert.equal(typeof e.code, 'string');
  assert.ok(e.message.length > 0, 'empty message');
  assert.equal(typeof e.retryable, 'boolean');
  return e;
}

/**
 * Registers the checks for one SDK and transport. connect() returns a
 * connected client; the tests call client.callTool and client.listTools,
 * which both SDK majors provide.
 */
export function defineChecks(label, connect) {
  describe(label, () => {
    let client;
    let notebook;
    let note;
    const title = `Plan ${randomBytes(4).toString('hex')}`;

    before(async () => {
      client = await connect();
      const { tools } = await client.listTools();
      const create = tools.find((t) => t.name === 'create_note');
      assert.ok(create?.outputSchema, 'create_note has no outputSchema: the SDK would not validate');
    });
    after(async () => { await client?.close(); });

    test('success: structuredContent validates against the outputSchema', async () => {
      const nb = await client.callTool({ name: 'create_notebook', arguments: { title: `${label} ${title}` } });
      assert.ok(!nb.isError, JSON.stringify(nb));
      notebook = nb.structuredContent.id;
      const res = await client.callTool({ name: 'create_note', arguments: { notebook_id: notebook, title } });
      assert.ok(!res.isError, JSON.stringify(res));
      note = res.structuredContent;
      assert.match(note.id, /^[0-9a-f]{32}$/);
      assert.equal(note.title, title);
      assert.deepEqual(JSON.parse(res.content[0].text), res.structuredContent);
    });

    test('duplicate create: NOTE_ALREADY_EXISTS with matches and the update_note hint', async () => {
      assert.ok(note, 'the success check must run first');
      const res = await client.callTool({ name: 'create_note', arguments: { notebook_id: notebook, title } });
      const e = toolError(res);
      assert.equal(e.code, 'NOTE_ALREADY_EXISTS');
      assert.equal(e.retryable, false);
      assert.match(e.message, /update_note/);
      assert.equal(e.details.update_tool, 'update_note');
      assert.deepEqual(e.details.matches, [{ id: note.id, trashed: false }]);
    });

    test('NOT_FOUND', async () => {
      const res = await client.callTool({ name: 'get_note', arguments: { id: randomBytes(16).toString('hex') } });
      const e = toolError(res);
      assert.equal(e.code, 'NOT_FOUND');
      assert.equal(e.retryable, false);
    });

    test('INVALID_ARGUMENT names the bad path, never the value', async () => {
      const res = await client.callTool({ name: 'get_note', arguments: { id: 'not-an-id-SECRETVALUE' } });
      const e = toolError(res);
      assert.equal(e.code, 'INVALID_ARGUMENT');
      assert.equal(e.retryable, false);
      assert.ok(e.details.problems.some((p) => p.path === '/id'), JSON.stringify(e.details));
      assert.doesNotMatch(res.content[0].text, /SECRETVALUE/);
    });

    test('notes as resources: templates, list newest first, read as Markdown', async () => {
      assert.ok(note, 'the success check must run first');
      const { resourceTemplates } = await client.listResourceTemplates();
      assert.deepEqual(resourceTemplates.map((t) => t.uriTemplate).sort(), ['joplin://note/{id}', 'joplin://resource/{id}']);
      const { resources } = await client.listResources();
      assert.ok(resources.some((r) => r.uri === `joplin://note/${note.id}` && r.name === title), JSON.stringify(resources));
      const { contents } = await client.readResource({ uri: `joplin://note/${note.id}` });
      assert.equal(contents.length, 1);
      assert.equal(contents[0].mimeType, 'text/markdown');
      assert.ok(contents[0].text.startsWith(`---\ntitle: ${JSON.stringify(title)}\nid: ${note.id}\n`), contents[0].text);
    });

    test('an image attachment comes back as an image block; its result validates without the data', async () => {
      assert.ok(note, 'the success check must run first');
      // A 1x1 PNG.
      const png = 'iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNk+M9QDwADhgGAWjR9awAAAABJRU5ErkJggg==';
      const made = await client.callTool({ name: 'create_resource', arguments: { data_base64: png, filename: 'dot.png', title: `dot ${randomBytes(4).toString('hex')}` } });
      assert.ok(!made.isError, JSON.stringify(made));
      const got = await client.callTool({ name: 'get_resource_content', arguments: { id: made.structuredContent.id } });
      assert.ok(!got.isError, JSON.stringify(got));
      assert.equal(got.content.length, 2, JSON.stringify(got.content));
      assert.equal(got.content[1].type, 'image');
      assert.equal(got.content[1].mimeType, 'image/png');
      assert.equal(got.content[1].data, png);
      assert.equal(got.structuredContent.data_base64, undefined, 'the data is sent once, as the image');
      assert.equal(got.structuredContent.mime, 'image/png');
      assert.deepEqual(JSON.parse(got.content[0].text), got.structuredContent);
    });

    test('fetch, search urls, outline and revisions: outputs validate', async () => {
      assert.ok(note, 'the success check must run first');
      const f = await client.callTool({ name: 'fetch', arguments: { id: note.id } });
      assert.ok(!f.isError, JSON.stringify(f));
      assert.equal(f.structuredContent.url, `joplin://x-callback-url/openNote?id=${note.id}`);
      assert.equal(f.structuredContent.title, title);
      const s = await client.callTool({ name: 'search', arguments: { query: title, type: 'note' } });
      assert.ok(!s.isError, JSON.stringify(s));
      assert.ok(Array.isArray(s.structuredContent.results));
      const o = await client.callTool({ name: 'get_note', arguments: { id: note.id, view: 'outline' } });
      assert.ok(!o.isError, JSON.stringify(o));
      assert.equal(o.structuredContent.body, undefined);
      const r = await client.callTool({ name: 'list_note_revisions', arguments: { note_id: note.id } });
      assert.ok(!r.isError, JSON.stringify(r));
      assert.deepEqual(r.structuredContent.revisions, []);
    });
  });
}

/** The JSON answer in a successful result's text block. */
function answer(result) {
  assert.ok(!result.isError, JSON.stringify(result));
  return JSON.parse(result.content[0].text);
}

/**
 * Registers the checks of `--tools core` for one SDK: the catalog is the
 * core tools plus find_tools and call_tool; the lean agent task runs on
 * core tools (edit one line and tag by a new title in one call); a trashed
 * note is restored through find_tools and call_tool.
 */
export function defineCoreChecks(label, connect) {
  describe(label, () => {
    let client;
    before(async () => { client = await connect(); });
    after(async () => { await client?.close(); });

    test('core catalog, the lean task, a non-core tool on demand', async () => {
      const { tools } = await client.listTools();
      assert.deepEqual(tools.map((t) => t.name).sort(),
        ['call_tool', 'create_note', 'edit_note', 'find_tools', 'get_note', 'list_notes', 'search']);
      const nb = answer(await client.callTool({ name: 'call_tool', arguments: { name: 'create_notebook', arguments: { title: `${label} ${randomBytes(4).toString('hex')}` } } }));
      const created = await client.callTool({ name: 'create_note', arguments: { notebook_id: nb.id, title: 'Roadmap', body: '- Plant the river beds\n' } });
      const id = created.structuredContent.id;
      // The index may still be building: then the fake Joplin's search
      // answers, which (like Joplin's) misses new notes.
      const found = await client.callTool({ name: 'search', arguments: { query: 'Roadmap' } });
      assert.ok(Array.isArray(found.structuredContent.results), JSON.stringify(found));
      assert.equal(found.structuredContent.items, undefined, 'each hit once: results only');
      const read = (await client.callTool({ name: 'get_note', arguments: { id } })).structuredContent;
      const edit = await client.callTool({ name: 'edit_note', arguments: { id, updated_time: read.updated_time, changes: [
        { op: 'replace', find: 'river beds', text: 'river beds and the hedges' },
        { op: 'tag', target: 'planning', create: true }] } });
      assert.equal(edit.structuredContent.status, 'applied', JSON.stringify(edit));
      assert.equal(edit.structuredContent.lines_changed, 2);
      const after = (await client.callTool({ name: 'get_note', arguments: { id, include: ['tags'] } })).structuredContent;
      assert.equal(after.body, '- Plant the river beds and the hedges\n');
      assert.deepEqual(after.tags.map((t) => t.title), ['planning']);

      answer(await client.callTool({ name: 'call_tool', arguments: { name: 'trash_note', arguments: { id } } }));
      assert.equal((await client.callTool({ name: 'get_note', arguments: { id } })).structuredContent.trashed, true);
      const more = answer(await client.callTool({ name: 'find_tools', arguments: { query: 'restore' } }));
      const restore = more.tools.find((t) => t.name === 'restore_note');
      assert.ok(restore?.input_schema, JSON.stringify(more));
      answer(await client.callTool({ name: 'call_tool', arguments: { name: 'restore_note', arguments: { id } } }));
      const back = (await client.callTool({ name: 'get_note', arguments: { id } })).structuredContent;
      assert.equal(back.trashed, undefined, 'trashed appears only when true');
    });
  });
}
