#!/usr/bin/env bash
# CLI + server: the document-extractor node and `sluice extract`, read in a
# confined process of their own, as a user meets them: exit codes, Dify's
# messages, limits, a workflow run with --input @FILE, and an upload to
# `sluice serve` read by a run.
. "$(dirname "$0")/lib.bash"
for tool in curl jq python3; do
    command -v "$tool" >/dev/null || { echo "1..0 # SKIP $tool is not installed"; exit 0; }
done
SPID= HPID=
on_exit() {
    [ -n "$SPID" ] && kill -KILL "$SPID" 2>/dev/null
    [ -n "$HPID" ] && kill "$HPID" 2>/dev/null
    wait 2>/dev/null
}
jqt() { jq -e "$@" >/dev/null 2>&1; }

printf 'name,"multi\r\nline"\r\n1,"a|b"\r\n' >"$T/t.csv"
want_csv=$'| name | multi line |\n| ---- | ----------- |\n| 1 | a|b |\n'

# ---- sluice extract ----
sl extract "$T/t.csv"
check "extract: a CSV file (exit $rc)" [ "$rc" = 0 ]
check "… is Dify's markdown table, byte for byte" [ "$(cat "$T/out"; echo x)" = "${want_csv}x" ]
cp "$T/t.csv" "$T/noext"
sl extract "$T/noext" --mime text/csv
check "extract: no extension, --mime text/csv chooses the reader (exit $rc)" \
    eval '[ "$rc" = 0 ] && out_has "| ---- |"'
sl extract "$T/noext"
check "extract: no extension and no type: exit 1 (got $rc)" [ "$rc" = 1 ]
check "… Dify's message" err_has "Unable to determine file type: MIME type or file extension is missing"
cp "$T/t.csv" "$T/t.CSV"
sl extract "$T/t.CSV"
check "extract: .CSV is not .csv, as in Dify (exit $rc)" \
    eval '[ "$rc" = 1 ] && err_has "Unsupported Extension Type: .CSV"'
printf 'x' >"$T/t.doc"
sl extract "$T/t.doc"
check "extract: .doc fails as Dify does without its Unstructured API (exit $rc)" \
    eval '[ "$rc" = 1 ] && err_has "Unstructured API URL is not configured for DOC file processing."'
if /usr/bin/python3 -c 'import xlwt' 2>/dev/null; then
    /usr/bin/python3 - "$T/book.xls" <<'EOF2'
import sys, xlwt
wb = xlwt.Workbook(encoding="utf-8")
ws = wb.add_sheet("One")
for c, v in enumerate(["name", "n"]):
    ws.write(0, c, v)
ws.write(1, 0, "héllo")
ws.write(1, 1, 2)
wb.add_sheet("Two").write(0, 0, "t")
wb.save(sys.argv[1])
EOF2
    sl extract "$T/book.xls"
    check "extract: a legacy .xls workbook (exit $rc)" [ "$rc" = 0 ]
    check "… each sheet a markdown table, as pandas over xlrd gives it" \
        [ "$(cat "$T/out"; echo x)" = "$(printf '| name | n |\n| ---- | - |\n| héllo | 2 |\n\n| t |\n| - |\n\nx')" ]
    head -c 600 "$T/book.xls" >"$T/cut.xls"
    sl extract "$T/cut.xls"
    check "extract: a truncated .xls fails with Dify's prefix (exit $rc)" \
        eval '[ "$rc" = 1 ] && err_has "Failed to extract text from Excel file:"'
else
    skip "extract: a legacy .xls workbook (python3-xlwt is not installed)"
fi
sl extract "$T/t.csv" --limit extract_max_input=4
check "extract: a file over extract_max_input is refused, naming the limit (exit $rc)" \
    eval '[ "$rc" = 1 ] && err_has "extract_max_input=4"'
sl extract "$T/t.csv" --limit extract_max_output=8
check "extract: text over extract_max_output fails, naming the limit (exit $rc)" \
    eval '[ "$rc" = 1 ] && err_has "extract_max_output"'
sl extract "$T/missing.csv"
check "extract: a missing file: exit 1, named (got $rc)" \
    eval '[ "$rc" = 1 ] && err_has "missing.csv"'
sl extract --help
check "extract --help: usage on stdout, exit 0" eval '[ "$rc" = 0 ] && out_has "usage: sluice extract"'
sl __extract csv 1 1 1 1 1 1
check "__extract with bad arguments says so (exit $rc)" \
    eval '[ "$rc" = 3 ] && err_has "sluice runs this itself"'

# ---- sluice run ----
cat >"$T/read.yml" <<'EOF2'
app: {mode: workflow, name: read}
kind: app
version: 0.1.5
workflow:
  graph:
    nodes:
    - {id: start, data: {type: start, title: Start, variables: [{variable: doc, label: Doc, type: file, required: true}, {variable: docs, label: Docs, type: file-list, required: false}]}}
    - {id: one, data: {type: document-extractor, title: One, variable_selector: [start, doc], is_array_file: false}}
    - {id: many, data: {type: document-extractor, title: Many, variable_selector: [start, docs], is_array_file: true}}
    - {id: end, data: {type: end, title: End, outputs: [{variable: text, value_selector: [one, text]}, {variable: texts, value_selector: [many, text]}]}}
    edges:
    - {source: start, target: one}
    - {source: one, target: many}
    - {source: many, target: end}
EOF2
sl run "$T/read.yml" --input doc=@"$T/t.csv" --json
check "run: a document-extractor reads --input @FILE (exit $rc)" [ "$rc" = 0 ]
check "… its text is the output" jqt --arg w "$want_csv" '.outputs.text == $w' "$T/out"
check "… and an empty file list gives []" jqt '.outputs.texts == []' "$T/out"
sl run "$T/read.yml" --input doc=@"$T/t.doc"
check "run: a .doc fails the node with Dify's message (exit $rc)" \
    eval '[ "$rc" = 1 ] && err_has "Unstructured API URL is not configured for DOC file processing."'

# other formats through the node, where Debian's python3 can make them
if /usr/bin/python3 -c 'import docx' 2>/dev/null; then
    /usr/bin/python3 -c 'import docx, sys
d = docx.Document(); d.add_paragraph("Intro")
t = d.add_table(rows=2, cols=2)
for r, row in enumerate([("Name", "Value"), ("Color", "Blue")]):
    for c, v in enumerate(row): t.cell(r, c).text = v
d.add_paragraph("Outro"); d.save(sys.argv[1])' "$T/t.docx"
    sl run "$T/read.yml" --input doc=@"$T/t.docx" --json
    check "run: a .docx's paragraphs and table in body order, as Dify (exit $rc)" \
        jqt '.outputs.text == "Intro\n| Name | Value |\n| --- | --- |\n| Color | Blue |\n\nOutro"' "$T/out"
else
    skip "run: a .docx (Debian's python3-docx is not installed)"
fi
if /usr/bin/python3 -c 'import reportlab' 2>/dev/null && command -v pdftotext >/dev/null; then
    /usr/bin/python3 -c 'from reportlab.pdfgen import canvas; import sys
c = canvas.Canvas(sys.argv[1])
for p in ("first page", "second page"):
    c.drawString(72, 720, p); c.showPage()
c.save()' "$T/t.pdf"
    sl run "$T/read.yml" --input doc=@"$T/t.pdf" --json
    check "run: a PDF's pages run together, as Dify joins them (exit $rc)" \
        jqt '.outputs.text == "first pagesecond page"' "$T/out"
else
    skip "run: a PDF (reportlab or pdftotext is not installed)"
fi

# ---- sluice serve ----
PORT=$(python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
BASE="http://127.0.0.1:$PORT"
D=$T/data
A=$("$SLUICE" app import "$T/read.yml" --data "$D" 2>>"$T/serve.err")
AK=$("$SLUICE" app key create "$A" --data "$D" 2>>"$T/serve.err")
"$SLUICE" serve --listen "127.0.0.1:$PORT" --data "$D" >/dev/null 2>>"$T/serve.err" &
SPID=$!
for ((i = 0; i < 100; i++)); do
    curl -s --max-time 1 "$BASE/health" 2>/dev/null | grep -q '"ok"' && break
    sleep 0.05
done
up=$(curl -s --max-time 10 -H "Authorization: Bearer $AK" -F "file=@$T/t.csv;type=text/csv" \
    -F user=alice "$BASE/v1/files/upload" | jq -r .id)
check "serve: the CSV uploads" [ -n "$up" -a "$up" != null ]
f="{\"type\": \"document\", \"transfer_method\": \"local_file\", \"upload_file_id\": \"$up\"}"
code=$(curl -s -o "$T/out" -w '%{http_code}' --max-time 30 -H "Authorization: Bearer $AK" \
    -H 'Content-Type: application/json' --data-binary \
    "{\"inputs\": {\"doc\": $f, \"docs\": [$f, $f]}, \"response_mode\": \"blocking\", \"user\": \"alice\"}" \
    "$BASE/v1/workflows/run" 2>"$T/err")
check "serve: a run reads the upload (HTTP $code)" \
    jqt --arg w "$want_csv" '.data.status == "succeeded" and .data.outputs.text == $w' "$T/out"
check "… and a list of two files gives two texts" \
    jqt --arg w "$want_csv" '.data.outputs.texts == [$w, $w]' "$T/out"
# a remote file comes through the guarded client: this host's addresses need
# the limit (the server was started without it)
mkfifo "$T/hin"
python3 tests/tools/httpd.py 0 <"$T/hin" >"$T/hport" 2>/dev/null &
HPID=$!
exec 7>"$T/hin"
for ((i = 0; i < 100; i++)); do [ -s "$T/hport" ] && break; sleep 0.05; done
URL="http://127.0.0.1:$(head -1 "$T/hport")/inline?type=text/csv&body=a,b%0A1,2%0A"
r="{\"type\": \"document\", \"transfer_method\": \"remote_url\", \"url\": \"$URL\"}"
code=$(curl -s -o "$T/out" -w '%{http_code}' --max-time 30 -H "Authorization: Bearer $AK" \
    -H 'Content-Type: application/json' --data-binary \
    "{\"inputs\": {\"doc\": $r}, \"response_mode\": \"blocking\", \"user\": \"alice\"}" \
    "$BASE/v1/workflows/run" 2>"$T/err")
check "serve: a remote file on this host is not fetched (HTTP $code)" \
    eval "! grep -q '| a | b |' '$T/out' && grep -q 'private\\|not allowed\\|loopback\\|refused' '$T/out'"
kill -KILL "$SPID" 2>/dev/null; wait "$SPID" 2>/dev/null
"$SLUICE" serve --listen "127.0.0.1:$PORT" --data "$D" --limit http_allow_private=true \
    >/dev/null 2>>"$T/serve.err" &
SPID=$!
for ((i = 0; i < 100; i++)); do
    curl -s --max-time 1 "$BASE/health" 2>/dev/null | grep -q '"ok"' && break
    sleep 0.05
done
code=$(curl -s -o "$T/out" -w '%{http_code}' --max-time 30 -H "Authorization: Bearer $AK" \
    -H 'Content-Type: application/json' --data-binary \
    "{\"inputs\": {\"doc\": $r}, \"response_mode\": \"blocking\", \"user\": \"alice\"}" \
    "$BASE/v1/workflows/run" 2>"$T/err")
check "serve: with http_allow_private, the remote CSV is typed by its answer and read (HTTP $code)" \
    jqt '.data.status == "succeeded" and .data.outputs.text == "| a | b |\n| - | - |\n| 1 | 2 |\n"' "$T/out"
exec 7>&-
echo "1..$n"
