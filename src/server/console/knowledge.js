// Knowledge bases (#/knowledge, #/knowledge/ID) and tool bindings
// (#/tools): what the knowledge-retrieval and tool nodes of the apps use.
// Read only, from the Knowledge API's GET routes under /admin/datasets and
// the admin API's /admin/tools; managing them stays with `sluice kb`,
// `sluice tools` and those APIs (docs/knowledge.md, docs/tools.md).

import {get, enc} from './api.js';
import {h, fill, chip, fmtTime, empty, errorBox, loading} from './dom.js';
import {jsonTree} from './json.js';

const PAGE = 50;

const METHODS = {
  semantic_search: 'vector', full_text_search: 'full text', keyword_search: 'keywords',
  hybrid_search: 'hybrid',
};

export async function knowledgePage(main, signal) {
  const body = h('div', null, loading());
  fill(main, h('section', null, h('div', {class: 'page-head'}, h('h1', null, 'Knowledge')), body));
  let list;
  try {
    list = await get('/admin/datasets?limit=100', {signal});
  } catch (e) {
    if (e.name !== 'AbortError') fill(body, errorBox(e.message));
    return;
  }
  const sets = list.data || [];
  if (!sets.length) {
    fill(body, empty('No knowledge bases yet. Create one with `sluice kb create NAME` and add documents with `sluice kb add`.'));
    return;
  }
  fill(body, h('div', {class: 'tablewrap'}, h('table', {class: 'list', testid: 'kb-table'},
    h('thead', null, h('tr', null, ['Name', 'Documents', 'Words', 'Search', 'Embedding', 'Created'].map((t) =>
      h('th', {scope: 'col'}, t)))),
    h('tbody', null, sets.map((d) => h('tr', {testid: 'kb-row', 'data-kb-id': d.id},
      h('td', null, h('a', {href: `#/knowledge/${enc(d.id)}`}, d.name || d.id),
        d.description ? h('div', {class: 'muted small'}, d.description) : null),
      h('td', null, String(d.document_count ?? '')),
      h('td', null, String(d.word_count ?? '')),
      h('td', null, METHODS[d.retrieval_model_dict?.search_method] || d.retrieval_model_dict?.search_method || ''),
      h('td', null, d.embedding_model ? `${d.embedding_model_provider}/${d.embedding_model}` : 'none (keywords)'),
      h('td', null, fmtTime(d.created_at)))))),
    list.total > sets.length ? h('p', {class: 'muted'}, `The first ${sets.length} of ${list.total}.`) : null));
}

export async function datasetPage(main, id, signal) {
  const head = h('div', {class: 'page-head'}, h('h1', null, 'Knowledge base'));
  const info = h('div', null, loading());
  const docs = h('div');
  fill(main, h('section', null, h('p', null, h('a', {href: '#/knowledge'}, '← Knowledge')), head, info, docs));
  let d;
  try {
    d = await get(`/admin/datasets/${enc(id)}`, {signal});
  } catch (e) {
    if (e.name !== 'AbortError') fill(info, errorBox(e.status === 404 ? `No such knowledge base: ${id}` : e.message));
    return;
  }
  fill(head, h('h1', null, d.name || id));
  fill(info, h('dl', {class: 'kv'},
    fact('Documents', d.document_count), fact('Words', d.word_count),
    fact('Indexing', d.indexing_technique),
    fact('Search', METHODS[d.retrieval_model_dict?.search_method] || d.retrieval_model_dict?.search_method),
    fact('Top k', d.retrieval_model_dict?.top_k),
    fact('Embedding', d.embedding_model ? `${d.embedding_model_provider}/${d.embedding_model}` : 'none'),
    fact('Chunks', d.doc_form), fact('Id', d.id)));
  showDocs(docs, id, 1, signal);
}

const fact = (k, v) => v == null || v === '' ? null : [h('dt', null, k), h('dd', null, String(v))];

async function showDocs(box, id, page, signal) {
  fill(box, loading('Loading documents…'));
  let r;
  try {
    r = await get(`/admin/datasets/${enc(id)}/documents?page=${page}&limit=${PAGE}`, {signal});
  } catch (e) {
    if (e.name !== 'AbortError') fill(box, errorBox(e.message));
    return;
  }
  const rows = r.data || [];
  if (!rows.length) {
    fill(box, empty('No documents yet.'));
    return;
  }
  const pager = h('div', {class: 'inline'},
    page > 1 ? h('button', {type: 'button', onclick: () => showDocs(box, id, page - 1, signal)}, 'Previous') : null,
    r.has_more ? h('button', {type: 'button', onclick: () => showDocs(box, id, page + 1, signal)}, 'Next') : null,
    h('span', {class: 'muted'}, `${r.total} documents`));
  fill(box, h('h2', null, 'Documents'), h('div', {class: 'tablewrap'}, h('table', {class: 'list', testid: 'kb-docs'},
    h('thead', null, h('tr', null, ['Document', 'Status', 'Words', 'Hits', 'Added', 'Enabled'].map((t) =>
      h('th', {scope: 'col'}, t)))),
    h('tbody', null, rows.map((doc) => h('tr', {testid: 'kb-doc', 'data-status': doc.indexing_status},
      h('td', null, doc.name, doc.error ? h('div', {class: 'small', testid: 'run-error'}, doc.error) : null),
      h('td', null, chip(doc.display_status || doc.indexing_status)),
      h('td', null, String(doc.word_count ?? '')),
      h('td', null, String(doc.hit_count ?? '')),
      h('td', null, fmtTime(doc.created_at)),
      h('td', null, doc.enabled ? 'yes' : 'no')))))), pager);
}

// Tool bindings: the server's own (sluice tools, PUT /admin/tools/ID), as
// the admin API shows them, secrets masked.
export async function toolsPage(main, signal) {
  const body = h('div', null, loading());
  fill(main, h('section', null, h('div', {class: 'page-head'}, h('h1', null, 'Tools')),
    h('p', {class: 'muted'}, 'Tool bindings every app may use (an app\'s own are on its page). Secrets are masked.'),
    body));
  let r;
  try {
    r = await get('/admin/tools', {signal});
  } catch (e) {
    if (e.name !== 'AbortError') fill(body, errorBox(e.message));
    return;
  }
  fill(body, bindings(r.data, 'No tool bindings on this server. Add them with `sluice tools` or PUT /admin/tools/ID.'));
}

// The bindings object {ID: binding} as a list; used by the app page too.
export function bindings(data, none) {
  const ids = Object.keys(data || {}).sort();
  if (!ids.length) return empty(none);
  return h('ul', {class: 'bindings', testid: 'tool-bindings'}, ids.map((id) => {
    const b = data[id];
    const kind = b && typeof b === 'object' ? ['mcp', 'openapi', 'workflow', 'builtin'].find((k) => k in b) : null;
    return h('li', {testid: 'tool-binding', 'data-tool-id': id},
      h('details', null, h('summary', null, h('code', null, id), kind ? h('span', {class: 'muted'}, ' · ' + kind) : null),
        jsonTree(b, 4)));
  }));
}
