#!/usr/bin/env python3
"""search_standin - stand-ins for the vendors of sluice's search built-ins,
each speaking the vendor's documented API, served by httpd.py under
/searxng, /ddg, /wikipedia and /arxiv (or alone: search_standin.py --port 0
--port-file F).

  /searxng/search        SearXNG's search API (GET, format=json): results
                         made from q; the first one's content echoes the
                         parameters received (q, categories, time_range,
                         format); format other than json is 403, as an
                         instance without the json format enabled answers
  /ddg/html              html.duckduckgo.com (POST form q, b, kl): result
                         blocks in DuckDuckGo's markup, 10 a page, an ad
                         first, one link wrapped in /l/?uddg=, a nav-link
                         form with the next page's hidden fields
  /wikipedia/LANG/w/api.php   MediaWiki's action API: list=search and
                         prop=extracts|pageprops over a few pages of wiki
                         LANG (normalized titles, redirects, missing pages,
                         a disambiguation page)
  /arxiv/api/query       arXiv's API: an Atom feed of entries made from
                         search_query; the first entry's summary echoes
                         the parameters received

A query that starts with "!" asks for a failure: "!status N" (that status,
with a vendor-style error body), "!huge" (12 MiB), "!slow S" (answers after
S seconds), "!private" (302 to http://10.1.2.3/), "!malformed" (a body
that is not what the API speaks), "!empty" (no results).
"""
import argparse
import json
import os
import threading
import time
import urllib.parse
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

PREFIXES = ("searxng", "ddg", "wikipedia", "arxiv")


def params(query, body, headers):
    q = {k: v[0] for k, v in urllib.parse.parse_qs(query, keep_blank_values=True).items()}
    if body and headers.get("content-type", "").startswith("application/x-www-form-urlencoded"):
        for k, v in urllib.parse.parse_qs(body.decode("utf-8", "replace"),
                                          keep_blank_values=True).items():
            q[k] = v[0]
    return q


def failure(text, vendor_error):
    """(status, ctype, body, headers) for a "!..." query, or None."""
    if not text.startswith("!"):
        return None
    word, _, arg = text[1:].partition(" ")
    if word == "status":
        code = int(arg or "500")
        ctype, body = vendor_error(code)
        return code, ctype, body, []
    if word == "huge":
        return 200, "application/octet-stream", b"x" * (12 << 20), []
    if word == "slow":
        time.sleep(float(arg or "5"))
        return 200, "text/plain", b"late", []
    if word == "private":
        return 302, "text/plain", b"", [("Location", "http://10.1.2.3/private")]
    return None


# ---- SearXNG ----

def searxng(rest, q):
    if rest != ["search"]:
        return 404, "text/plain", b"Not Found", []
    if q.get("format") != "json":
        return 403, "text/html", b"<title>403 Forbidden</title><h1>Forbidden</h1>", []
    text = q.get("q", "")
    f = failure(text, lambda code: ("text/html", b"<h1>SearXNG says %d</h1>" % code))
    if f:
        return f
    if text == "!malformed":
        return 200, "application/json", b'{"results": [{"title": "cut', []
    out = {"query": text, "number_of_results": 0, "results": [], "answers": [],
           "corrections": [], "infoboxes": [], "suggestions": [], "unresponsive_engines": []}
    if text != "!empty":
        echo = " ".join("%s=%s" % (k, q[k]) for k in ("q", "categories", "time_range", "format")
                        if k in q)
        for i in range(1, 4):
            out["results"].append({
                "url": "https://example.com/%s/%d" % (urllib.parse.quote(text), i),
                "title": "%s result %d" % (text, i),
                "content": echo if i == 1 else "about %s, number %d" % (text, i),
                "engine": "stand-in", "parsed_url": ["https", "example.com", "/", "", "", ""],
                "template": "default.html", "engines": ["stand-in"], "positions": [i],
                "score": 1.0 / i, "category": q.get("categories", "general"),
                "publishedDate": None})
        out["number_of_results"] = len(out["results"])
    return 200, "application/json", json.dumps(out, ensure_ascii=False).encode(), []


# ---- DuckDuckGo (html.duckduckgo.com) ----

DDG_HEAD = ('<!DOCTYPE html PUBLIC "-//W3C//DTD XHTML 1.0 Transitional//EN">\n<html>\n<head>'
            '<meta charset="UTF-8"><title>%s at DuckDuckGo</title>'
            '<style>.x{}</style><script>var x = "<div><h2>not a result</h2></div>";</script>'
            '</head>\n<body>\n<div id="links" class="results">\n')


def ddg_result(href, title, snippet):
    return ('<div class="result results_links results_links_deep web-result ">\n'
            '  <div class="links_main links_deep result__body">\n'
            '    <h2 class="result__title">\n'
            '      <a rel="nofollow" class="result__a" href="%s">%s</a>\n'
            '    </h2>\n'
            '    <div class="result__extras"><div class="result__extras__url">\n'
            '      <a class="result__url" href="%s">example.com</a>\n'
            '    </div></div>\n'
            '    <a class="result__snippet" href="%s">%s</a>\n'
            '    <div class="clear"></div>\n'
            '  </div>\n</div>\n' % (href, title, href, href, snippet))


def ddg(rest, q, method):
    if rest != ["html"] or method != "POST":
        return 405 if rest == ["html"] else 404, "text/plain", b"no", []
    text = q.get("q", "")
    f = failure(text, lambda code: ("text/html", b"<html><body>anomaly %d</body></html>" % code))
    if f:
        return f
    if text == "!malformed":
        return (200, "text/html",
                b"<html><body><p>Unusual traffic. <form>Prove you are human</form></p>", [])
    esc = text.replace("&", "&amp;").replace("<", "&lt;").replace('"', "&quot;")
    page = DDG_HEAD % esc
    if text == "!empty":
        page += '<div class="no-results">No  results.</div></div></body></html>'
        return 200, "text/html; charset=UTF-8", page.encode(), []
    start = int(q.get("s") or "0")
    total = 23
    if start == 0:
        page += ddg_result("https://duckduckgo.com/y.js?ad_domain=ads.example&amp;u3=x",
                           "An ad", "buy <b>now</b>")
    for i in range(start, min(start + 10, total)):
        href = "https://example.com/%s/%d" % (urllib.parse.quote(text), i + 1)
        if i == 1:
            href = "//duckduckgo.com/l/?uddg=%s&amp;rut=abc" % urllib.parse.quote(href + "?a=1&b=2",
                                                                                safe="")
        title = "%s &amp; result %d" % (esc, i + 1)
        snippet = "kl=%s s=%d: about <b>%s</b> number %d" % (q.get("kl", ""), start, esc, i + 1)
        page += ddg_result(href, title, snippet)
    if start + 10 < total:
        page += ('<div class="nav-link">\n<form action="/html/" method="post">\n'
                 '<input type="submit" class="btn btn--alt" value="Next" />\n'
                 '<input type="hidden" name="q" value="%s" />\n'
                 '<input type="hidden" name="s" value="%d" />\n'
                 '<input type="hidden" name="nextParams" value="" />\n'
                 '<input type="hidden" name="v" value="l" />\n'
                 '<input type="hidden" name="o" value="json" />\n'
                 '<input type="hidden" name="dc" value="%d" />\n'
                 '<input type="hidden" name="api" value="d.js" />\n'
                 '<input type="hidden" name="vqd" value="4-123" />\n'
                 '<input type="hidden" name="kl" value="%s" />\n'
                 '</form>\n</div>\n' % (esc, start + 10, start + 11, q.get("kl", "")))
    page += '</div>\n</body>\n</html>\n'
    return 200, "text/html; charset=UTF-8", page.encode(), []


# ---- Wikipedia (MediaWiki action API) ----

WIKI = {
    "en": {
        "Alan Turing": "Alan Mathison Turing (23 June 1912 \u2013 7 June 1954) was an English "
                       "mathematician and computer scientist.\nHe was highly influential.",
        "Turing machine": "A Turing machine is a mathematical model of computation.",
        "Turing": None,  # a disambiguation page
        "Turing test": "The Turing test is a test of a machine's ability to exhibit "
                       "intelligent behaviour.",
        "Longest page": "\u00e9" * 3000 + "\u4e2d" * 2000,
        "Empty page": "",
    },
    "de": {
        "Alan Turing": "Alan Mathison Turing war ein britischer Logiker und Mathematiker.",
    },
}
REDIRECTS = {"Alan M. Turing": "Alan Turing"}
SEARCH = {
    "turing": ["Alan Turing", "Turing", "Turing machine", "Turing test"],
    "redirect": ["Alan M. Turing", "Gone page", "turing test"],
    "long": ["Longest page", "Alan Turing"],
    "empty": ["Empty page"],
}


def wikipedia(rest, q):
    if len(rest) != 3 or rest[1:] != ["w", "api.php"]:
        return 404, "text/plain", b"Not Found", []
    lang = rest[0]
    pages = WIKI.get(lang, {})
    if q.get("action") != "query" or q.get("format") != "json":
        return 200, "application/json", json.dumps(
            {"error": {"code": "badparams", "info": "the stand-in wants action=query and "
                                                    "format=json"}}).encode(), []
    if q.get("list") == "search":
        text = q.get("srsearch", "")
        f = failure(text, lambda code: ("text/html", b"<h1>Wikimedia error %d</h1>" % code))
        if f:
            return f
        if text == "!malformed":
            return 200, "application/json", b'{"query": {"search": [{"title": ', []
        if text == "!apierror":
            return 200, "application/json", json.dumps(
                {"error": {"code": "srsearch-error", "info": "Search request is longer than "
                                                             "the maximum allowed length."}}
            ).encode(), []
        key = text.lower().split()[0] if text.strip() else ""
        titles = SEARCH.get(key, [t for t in pages if key and key in t.lower()])
        if lang != "en":
            titles = [t for t in titles if t in pages]
        limit = int(q.get("srlimit") or "10")
        hits = [{"ns": 0, "title": t} for t in titles[:limit]]
        return 200, "application/json", json.dumps(
            {"batchcomplete": "", "query": {"searchinfo": {"totalhits": len(titles)},
                                            "search": hits}}).encode(), []
    if "extracts" in q.get("prop", "").split("|"):
        titles = q.get("titles", "").split("|")
        out = {"batchcomplete": "", "query": {"pages": {}}}
        norm, redir = [], []
        missing = -1
        for t in titles:
            n = t[:1].upper() + t[1:]
            if n != t:
                norm.append({"from": t, "to": n})
            if n in REDIRECTS and "redirects" in q:
                redir.append({"from": n, "to": REDIRECTS[n]})
                n = REDIRECTS[n]
            if n in pages:
                pid = str(1000 + sorted(pages).index(n))
                page = {"pageid": int(pid), "ns": 0, "title": n}
                if pages[n] is None:
                    page["extract"] = n + " may refer to:"
                    if "pageprops" in q.get("prop", ""):
                        page["pageprops"] = {"disambiguation": ""}
                else:
                    page["extract"] = pages[n] if "exintro" in q else pages[n] + "\n\nMore."
                out["query"]["pages"][pid] = page
            else:
                out["query"]["pages"][str(missing)] = {"ns": 0, "title": n, "missing": ""}
                missing -= 1
        if norm:
            out["query"]["normalized"] = norm
        if redir:
            out["query"]["redirects"] = redir
        return 200, "application/json", json.dumps(out).encode(), []
    return 200, "application/json", json.dumps(
        {"error": {"code": "unknown", "info": "the stand-in does not serve this"}}).encode(), []


# ---- arXiv ----

ATOM_HEAD = ('<?xml version="1.0" encoding="UTF-8"?>\n'
             '<feed xmlns="http://www.w3.org/2005/Atom" '
             'xmlns:opensearch="http://a9.com/-/spec/opensearch/1.1/" '
             'xmlns:arxiv="http://arxiv.org/schemas/atom">\n'
             '  <id>https://arxiv.org/api/stand-in</id>\n'
             '  <title>arXiv Query: search_query=%s</title>\n'
             '  <updated>2026-12-01T00:00:00Z</updated>\n'
             '  <link href="https://arxiv.org/api/query" type="application/atom+xml"/>\n'
             '  <opensearch:itemsPerPage>%d</opensearch:itemsPerPage>\n'
             '  <opensearch:totalResults>%d</opensearch:totalResults>\n'
             '  <opensearch:startIndex>0</opensearch:startIndex>\n')


def xml_esc(s):
    return s.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")


def arxiv_entry(i, updated, title, authors, summary):
    a = "".join("    <author>\n      <name>%s</name>\n"
                "      <arxiv:affiliation>Somewhere</arxiv:affiliation>\n    </author>\n"
                % xml_esc(n) for n in authors)
    return ('  <entry>\n'
            '    <id>http://arxiv.org/abs/2401.%05dv1</id>\n'
            '    <title>%s</title>\n'
            '    <updated>%s</updated>\n'
            '    <link href="https://arxiv.org/abs/2401.%05dv1" rel="alternate" type="text/html"/>\n'
            '    <link title="pdf" href="https://arxiv.org/pdf/2401.%05dv1" rel="related"/>\n'
            '    <summary>%s</summary>\n'
            '%s'
            '    <category term="cs.AI" scheme="http://arxiv.org/schemas/atom"/>\n'
            '    <published>2024-01-0%dT09:00:00Z</published>\n'
            '    <arxiv:primary_category term="cs.AI"/>\n'
            '  </entry>\n' % (i, title, updated, i, i, summary, a, i))


def arxiv(rest, q):
    if rest != ["api", "query"]:
        return 404, "text/plain", b"Not Found", []
    text = q.get("search_query", "")

    def err(code):
        return "application/atom+xml", (
            (ATOM_HEAD % ("", 1, 1)) +
            '  <entry>\n    <id>http://arxiv.org/api/errors#incorrect_id_format</id>\n'
            '    <title>Error</title>\n'
            '    <summary>incorrect id format for %d</summary>\n'
            '    <updated>2026-12-01T00:00:00-05:00</updated>\n'
            '    <author><name>arXiv api core</name></author>\n  </entry>\n</feed>\n'
            % code).encode()
    f = failure(text, err)
    if f:
        return f
    if text == "!malformed":
        return 200, "application/atom+xml", b"<?xml version='1.0'?><feed><entry><title>cut", []
    if text == "!empty":
        return 200, "application/atom+xml", ((ATOM_HEAD % ("", 0, 0)) + "</feed>\n").encode(), []
    n = min(int(q.get("max_results") or "10"), 5)
    echo = " ".join("%s=%s" % (k, q[k]) for k in ("search_query", "id_list", "sortBy",
                                                  "sortOrder", "start", "max_results") if k in q)
    body = ATOM_HEAD % (xml_esc(text), n, 5)
    entries = [
        ("2024-03-05T17:59:46Z", "Attention Is All\n      You Need &amp; More",
         ["Ashish Vaswani", "Noam Shazeer"], "\n  " + xml_esc(echo) + "\nSecond line.\n  "),
        ("2024-02-29T23:30:00-02:00", "A &lt;Second&gt; Paper", ["Ada Lovelace"],
         "Caf\u00e9 &#233;t&#xE9; <![CDATA[<raw> & kept]]> done."),
        ("2024-01-01T00:00:00Z", "Third", [], "No authors here."),
        ("2023-12-31T12:00:00+01:00", "Fourth", ["X"], "Four."),
        ("2023-12-30T12:00:00Z", "Fifth", ["Y"], "Five."),
    ]
    for i, (u, t, a, s) in enumerate(entries[:n]):
        body += arxiv_entry(i + 1, u, t, a, s)
    body += "</feed>\n"
    return 200, "application/atom+xml; charset=utf-8", body.encode(), []


def handle(path, method, headers, body):
    """(status, content type, body bytes, extra headers) for one request."""
    url = urllib.parse.urlsplit(path)
    parts = [urllib.parse.unquote(p) for p in url.path.split("/")[1:]]
    vendor, rest = parts[0], [p for p in parts[1:] if p != ""] or [""]
    q = params(url.query, body, {k.lower(): v for k, v in headers.items()})
    if vendor == "searxng":
        return searxng(rest, q)
    if vendor == "ddg":
        return ddg(rest, q, method)
    if vendor == "wikipedia":
        return wikipedia(rest, q)
    if vendor == "arxiv":
        return arxiv(rest, q)
    return 404, "text/plain", b"no such vendor", []


class Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"

    def log_message(self, fmt, *args):
        pass

    def any(self):
        n = int(self.headers.get("Content-Length") or 0)
        body = self.rfile.read(n) if n else b""
        status, ctype, out, extra = handle(self.path, self.command, self.headers, body)
        self.send_response_only(status)
        self.send_header("Content-Type", ctype)
        for k, v in extra:
            self.send_header(k, v)
        self.send_header("Content-Length", str(len(out)))
        self.end_headers()
        if self.command != "HEAD":
            try:
                self.wfile.write(out)
            except OSError:
                pass

    do_GET = do_POST = do_HEAD = any


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--port", type=int, default=0)
    ap.add_argument("--port-file")
    a = ap.parse_args()
    server = ThreadingHTTPServer(("127.0.0.1", a.port), Handler)
    server.daemon_threads = True
    if a.port_file:
        tmp = a.port_file + ".tmp"
        with open(tmp, "w") as f:
            f.write("%d\n" % server.server_address[1])
        os.rename(tmp, a.port_file)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    try:
        while True:
            time.sleep(3600)
    except KeyboardInterrupt:
        pass


if __name__ == "__main__":
    main()
