// A small Markdown renderer that makes DOM nodes, never HTML text: model
// answers are data, so raw HTML in them shows as the characters it is.
// Blocks: paragraphs, headings, lists (nested by indent), fenced and
// indented code, block quotes, rules, tables.  Inline: code, bold, italic,
// strike, links (http/https only, else plain text), bare URLs.

import {h} from './dom.js';

export function md(src) {
  const root = h('div', {class: 'md'});
  blocks(String(src ?? '').replace(/\r\n?/g, '\n').split('\n'), root);
  return root;
}

const FENCE = /^ {0,3}(`{3,}|~{3,})\s*([\w+#.-]*)/;
const HEADING = /^ {0,3}(#{1,6})\s+(.*?)\s*#*\s*$/;
const RULE = /^ {0,3}([-*_])(\s*\1){2,}\s*$/;
const ITEM = /^( {0,3})([-*+]|\d{1,9}[.)])(\s+|$)/;
const QUOTE = /^ {0,3}> ?/;
const TABLE_SEP = /^\s*\|?\s*:?-+:?\s*(\|\s*:?-+:?\s*)*\|?\s*$/;

function blocks(lines, out) {
  let i = 0;
  while (i < lines.length) {
    const line = lines[i];
    let m;
    if (!line.trim()) { i++; continue; }
    if ((m = FENCE.exec(line))) {
      const close = new RegExp('^ {0,3}' + m[1][0] + '{' + m[1].length + ',}\\s*$');
      const body = [];
      for (i++; i < lines.length && !close.test(lines[i]); i++) body.push(lines[i]);
      i++;
      out.append(code(body.join('\n'), m[2]));
    } else if ((m = HEADING.exec(line))) {
      out.append(h('h' + Math.min(6, m[1].length + 2), null, inline(m[2])));
      i++;
    } else if (RULE.test(line)) {
      out.append(h('hr'));
      i++;
    } else if (/^( {4}|\t)/.test(line)) {
      const body = [];
      for (; i < lines.length && (/^( {4}|\t)/.test(lines[i]) || !lines[i].trim()); i++) body.push(lines[i].replace(/^( {4}|\t)/, ''));
      while (body.length && !body[body.length - 1].trim()) body.pop();
      out.append(code(body.join('\n'), ''));
    } else if (QUOTE.test(line)) {
      const body = [];
      for (; i < lines.length && QUOTE.test(lines[i]); i++) body.push(lines[i].replace(QUOTE, ''));
      const q = h('blockquote');
      blocks(body, q);
      out.append(q);
    } else if (ITEM.test(line)) {
      i = list(lines, i, out);
    } else if (line.includes('|') && i + 1 < lines.length && TABLE_SEP.test(lines[i + 1]) && lines[i + 1].includes('-')) {
      i = table(lines, i, out);
    } else {
      const body = [];
      for (; i < lines.length && lines[i].trim() && !startsBlock(lines[i]); i++) body.push(lines[i]);
      if (!body.length) body.push(lines[i++]);
      out.append(h('p', null, inline(body.join('\n').trim())));
    }
  }
}

const startsBlock = (l) => FENCE.test(l) || HEADING.test(l) || RULE.test(l) || QUOTE.test(l) || ITEM.test(l);

function code(text, lang) {
  return h('pre', {class: 'code'}, h('code', {'data-lang': lang || null}, text));
}

// A list from line i; its items' own lines (indented past the marker) are
// blocks of their own, so lists nest.  Returns the next line's index.
function list(lines, i, out) {
  const first = ITEM.exec(lines[i]);
  const ordered = /\d/.test(first[2]);
  const el = h(ordered ? 'ol' : 'ul');
  if (ordered && parseInt(first[2], 10) !== 1) el.setAttribute('start', String(parseInt(first[2], 10)));
  let loose = false;
  while (i < lines.length) {
    const m = ITEM.exec(lines[i]);
    if (!m || /\d/.test(m[2]) !== ordered || m[1].length > first[1].length + 1) break;
    const indent = m[0].length || m[1].length + m[2].length + 1;
    const body = [lines[i].slice(m[0].length)];
    for (i++; i < lines.length; i++) {
      const l = lines[i];
      if (!l.trim()) {
        const next = lines[i + 1], nm = next === undefined ? null : ITEM.exec(next);
        if (nm && leading(next) <= first[1].length + 1) {
          // A blank line between two items of this list makes it loose.
          if (/\d/.test(nm[2]) === ordered) loose = true;
          i++;
          break;
        }
        if (next === undefined || !/^\s/.test(next)) break;
        body.push(''); // an item of several paragraphs: loose too
        loose = true;
        continue;
      }
      if (leading(l) >= Math.min(indent, first[1].length + 2)) body.push(l.slice(Math.min(leading(l), indent)));
      else if (!ITEM.test(l) && !startsBlock(l) && body[body.length - 1] !== '') body.push(l); // lazy continuation
      else break;
    }
    const li = h('li');
    blocks(body, li);
    el.append(li);
    if (i < lines.length && !ITEM.test(lines[i])) break;
  }
  // A tight list shows its items' text without paragraph margins.
  if (!loose) for (const li of el.children) for (const p of [...li.children]) if (p.tagName === 'P') p.replaceWith(...p.childNodes);
  out.append(el);
  return i;
}

const leading = (l) => l.length - l.trimStart().length;

function table(lines, i, out) {
  const cells = (l) => l.trim().replace(/^\|/, '').replace(/(?<!\\)\|$/, '').split(/(?<!\\)\|/).map((c) => c.trim().replace(/\\\|/g, '|'));
  const head = cells(lines[i]);
  const tbody = h('tbody');
  for (i += 2; i < lines.length && lines[i].trim() && lines[i].includes('|'); i++) {
    const row = cells(lines[i]);
    tbody.append(h('tr', null, head.map((_, k) => h('td', null, inline(row[k] ?? '')))));
  }
  out.append(h('div', {class: 'tablewrap'}, h('table', null, h('thead', null, h('tr', null, head.map((c) => h('th', null, inline(c))))), tbody)));
  return i;
}

const CODE = /(`+)([\s\S]*?[^`]|[^`])\1(?!`)/y;
const LINK = /!?\[([^\]\n]*)\]\(\s*<?([^\s()<>]*(?:\([^\s()]*\)[^\s()<>]*)*)>?(?:\s+["'][^"'\n]*["'])?\s*\)/y;
const URL_RE = /https?:\/\/[^\s<>"']+/y;
const ESCAPABLE = '\\`*_{}[]()#+-.!~|>';

// Inline Markdown of one string, as an array of nodes.
export function inline(s) {
  const out = [];
  let text = '';
  const flush = () => { if (text) { out.push(document.createTextNode(text)); text = ''; } };
  const push = (node) => { flush(); out.push(node); };
  for (let i = 0; i < s.length;) {
    const c = s[i];
    let m;
    if (c === '\\' && ESCAPABLE.includes(s[i + 1] || ' ')) { text += s[i + 1]; i += 2; continue; }
    if (c === '\\' && s[i + 1] === '\n') { push(h('br')); i += 2; continue; }
    if (c === '\n') { push(h('br')); i++; continue; }
    if (c === '`') {
      CODE.lastIndex = i;
      if ((m = CODE.exec(s))) { push(h('code', null, m[2])); i = CODE.lastIndex; continue; }
    }
    if (c === '*' || c === '_' || c === '~') {
      const end = closing(s, i);
      if (end) { push(h(end.tag, null, inline(s.slice(i + end.len, end.at)))); i = end.at + end.len; continue; }
    }
    if (c === '[' || (c === '!' && s[i + 1] === '[')) {
      LINK.lastIndex = i;
      if ((m = LINK.exec(s))) {
        const label = m[1] || m[2];
        push(link(m[2], c === '!' ? [label || 'image'] : inline(label)));
        i = LINK.lastIndex;
        continue;
      }
    }
    if (c === 'h' && (i === 0 || /[\s(]/.test(s[i - 1]))) {
      URL_RE.lastIndex = i;
      if ((m = URL_RE.exec(s))) {
        const url = m[0].replace(/[.,;:!?)\]]+$/, '');
        push(link(url, [url]));
        i += url.length;
        continue;
      }
    }
    text += c;
    i++;
  }
  flush();
  return out;
}

// The closing delimiter of emphasis opening at i, or null.
function closing(s, i) {
  const c = s[i];
  const len = s[i + 1] === c ? 2 : 1;
  if (c === '~' && len === 1) return null;
  if (c === '_' && i > 0 && /\w/.test(s[i - 1])) return null; // snake_case
  const open = i + len;
  if (!s[open] || /\s/.test(s[open])) return null;
  const d = c.repeat(len);
  for (let at = s.indexOf(d, open + 1); at > 0; at = s.indexOf(d, at + 1)) {
    if (/\s/.test(s[at - 1])) continue;
    if (len === 1 && s[at + 1] === c) { at++; continue; }
    if (c === '_' && /\w/.test(s[at + len] || '')) continue;
    return {tag: c === '~' ? 'del' : len === 2 ? 'strong' : 'em', len, at};
  }
  return null;
}

function link(url, kids) {
  let u = null;
  try { u = new URL(url); } catch { /* relative or not a URL: text */ }
  if (!u || (u.protocol !== 'http:' && u.protocol !== 'https:')) return h('span', null, kids);
  return h('a', {href: u.href, target: '_blank', rel: 'noopener noreferrer'}, kids);
}
