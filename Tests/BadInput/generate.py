#!/usr/bin/env python3
"""Writes the bad-input corpus (Tests/BadInput/<kind>/…) that BadInputCorpusTests runs.

Each case is one file. Its name says what the product must do with it:
  *.fail.*   refused whole: exit 2 naming the file and the place (JSON path, line, column);
             nothing of it staged
  *.reject.* loaded row by row: each bad row goes to the rejects file with its line number,
             the good rows load
  *.ok.*     odd but valid input that must load exactly (kept to pin the behaviour)
SOQL cases are lines of soql/*.txt, each of which must be refused with a row and column; formula
cases are lines of formulas/*.txt, each refused with a column.
Cases too large to commit (a 31,000-stage cycle, a 10 MB attribute) are made by the test itself.
Run it from anywhere; it rewrites the corpus in place.
"""
import json, os, shutil

ROOT = os.path.dirname(os.path.abspath(__file__))

def write(kind, name, content):
    path = os.path.join(ROOT, kind, name)
    os.makedirs(os.path.dirname(path), exist_ok=True)
    with open(path, "wb") as f:
        f.write(content if isinstance(content, bytes) else content.encode("utf-8"))

for kind in ["pipelines", "csv", "xml", "soql", "formulas", "seeds"]:
    shutil.rmtree(os.path.join(ROOT, kind), ignore_errors=True)

# ---------------------------------------------------------------- pipelines
SOUPS = [{"soupName": "Accounts", "indexes": [{"path": "Id", "type": "string"}, {"path": "Name", "type": "string"}]}]
def pipeline(stages, **extra):
    doc = {"name": "bad", "store": "store.sqlite", "soups": SOUPS, "stages": stages}
    doc.update(extra)
    return json.dumps(doc, indent=1)

EXTRACT = {"id": "extract", "type": "extract.csv", "file": "data.csv"}
raw_pipelines = {
    "empty-file": "",
    "whitespace-only": "   \n\t ",
    "truncated": '{"name": "x", "stages": [ {"id": "a", "type": "extract.csv"',
    "trailing-comma": '{"name": "x", "stages": [],}',
    "single-quotes": "{'name': 'x'}",
    "comment": '{"name": "x" // a comment\n}',
    "nan": '{"name": NaN}',
    "bad-escape": '{"name": "\\q"}',
    "lone-surrogate": '{"name": "\\ud800"}',
    "control-character-in-string": '{"name": "a\x01b"}',
    "array-root": "[]",
    "null-root": "null",
    "number-root": "42",
    "two-documents": '{"name": "a"} {"name": "b"}',
    "unquoted-key": '{name: "x"}',
    "deep-nesting": "[" * 100000,
    "invalid-utf8": b'{"name": "\xff\xfe"}',
    "missing-colon": '{"name" "x"}',
    "huge-number": '{"name": "x", "stages": [], "org": {"timeoutSeconds": 1e400}}',
}
for name, text in raw_pipelines.items():
    write("pipelines", name + ".fail.json", text)

structured = {
    "stages-not-array": pipeline({"a": 1}),
    "stage-not-object": pipeline(["extract"]),
    "stage-without-id": pipeline([{"type": "extract.csv", "file": "data.csv"}]),
    "stage-without-type": pipeline([{"id": "a", "file": "data.csv"}]),
    "unknown-stage-type": pipeline([{"id": "a", "type": "extract.json", "file": "data.csv"}]),
    "unknown-stage-key": pipeline([dict(EXTRACT, flie="data.csv")]),
    "unknown-top-level-key": pipeline([EXTRACT], stagess=[]),
    "duplicate-stage-id": pipeline([EXTRACT, EXTRACT]),
    "self-cycle": pipeline([dict(EXTRACT, after=["extract"])]),
    "two-stage-cycle": pipeline([dict(EXTRACT, id="a", after=["b"]), dict(EXTRACT, id="b", after=["a"])]),
    "from-unknown-stage": pipeline([{"id": "load", "type": "stage", "from": "nope", "soup": "Accounts", "matchOn": "Name"}]),
    "after-not-array-of-strings": pipeline([dict(EXTRACT, after=[1, 2])]),
    "unknown-soup": pipeline([EXTRACT, {"id": "load", "type": "stage", "from": "extract", "soup": "Nope", "matchOn": "Name"}]),
    "unset-variable": pipeline([dict(EXTRACT, file="${NO_SUCH_VARIABLE_EVER}")]),
    "unterminated-variable": pipeline([dict(EXTRACT, file="${NOPE")]),
    "literal-password": pipeline([EXTRACT], org={"instanceUrl": "https://example.my.salesforce.com",
                                               "auth": {"flow": "password", "username": "u", "password": "hunter2", "clientId": "c"}}),
    "plain-http-org": pipeline([EXTRACT], org={"instanceUrl": "http://127.attacker.example",
                                             "auth": {"flow": "access_token", "accessToken": "${TOKEN}"}}),
    "plain-http-nip-io": pipeline([EXTRACT], org={"instanceUrl": "http://127.0.0.1.nip.io",
                                                "auth": {"flow": "access_token", "accessToken": "${TOKEN}"}}),
    "timeout-too-large": pipeline([EXTRACT], org={"instanceUrl": "https://example.my.salesforce.com", "timeoutSeconds": 1e308,
                                                "auth": {"flow": "access_token", "accessToken": "${TOKEN}"}}),
    "timeout-negative": pipeline([EXTRACT], org={"instanceUrl": "https://example.my.salesforce.com", "timeoutSeconds": -1,
                                               "auth": {"flow": "access_token", "accessToken": "${TOKEN}"}}),
    "unknown-auth-flow": pipeline([EXTRACT], org={"instanceUrl": "https://example.my.salesforce.com", "auth": {"flow": "magic"}}),
    "bad-where-soql": pipeline([{"id": "mark", "type": "markDirty", "soup": "Accounts", "where": "Name = 'unterminated"}]),
    "unset-bind": pipeline([{"id": "mark", "type": "markDirty", "soup": "Accounts", "where": "Name = :NO_SUCH_BIND_EVER"}]),
    "bad-extract-query": pipeline([{"id": "q", "type": "extract.soql", "query": "SELECT FROM Account"}]),
    "csv-delimiter-two-characters": pipeline([dict(EXTRACT, delimiter=";;")]),
    "csv-unknown-encoding": pipeline([dict(EXTRACT, encoding="ebcdic")]),
    "csv-unknown-type": pipeline([dict(EXTRACT, types={"Amount": "money"})]),
    "csv-unknown-time-zone": pipeline([dict(EXTRACT, timeZone="Mars/Olympus")]),
    "csv-file-missing-key": pipeline([{"id": "extract", "type": "extract.csv"}]),
    "xml-record-missing": pipeline([{"id": "x", "type": "extract.xml", "file": "data.xml"}]),
    "xml-children-not-array": pipeline([{"id": "x", "type": "extract.xml", "file": "data.xml", "record": "a", "children": "b"}]),
    "mark-dirty-bad-as": pipeline([{"id": "mark", "type": "markDirty", "soup": "Accounts", "as": "sometimes"}]),
    "sync-up-unknown-sync": pipeline([{"id": "up", "type": "syncUp", "sync": "NoSuchSync"}]),
    "boolean-as-string": pipeline([{"id": "mark", "type": "markDirty", "soup": "Accounts", "dryRun": "false"}]),
    "soups-not-array": pipeline([EXTRACT]).replace('"soups": [', '"soups": {"x": [').replace(']\n ],\n "stages"', ']\n ]},\n "stages"'),
    "transform-unknown-function": pipeline([EXTRACT, {"id": "t", "type": "transform", "from": "extract", "set": {"Email": "LOWR(TRIM(Email))"}}]),
    "transform-wrong-argument-count": pipeline([EXTRACT, {"id": "t", "type": "transform", "from": "extract", "set": {"Size": "LEN(1, 2)"}}]),
    "transform-formula-not-string": pipeline([EXTRACT, {"id": "t", "type": "transform", "from": "extract", "set": {"Size": 3}}]),
    "transform-where-not-condition": pipeline([EXTRACT, {"id": "t", "type": "transform", "from": "extract", "where": "LEN(Name)"}]),
    "transform-reject-without-reason": pipeline([EXTRACT, {"id": "t", "type": "transform", "from": "extract", "reject": [{"when": "TRUE"}]}]),
    "transform-map-missing-file": pipeline([EXTRACT, {"id": "t", "type": "transform", "from": "extract",
                                                      "map": {"Country": {"file": "no-such-map.csv", "key": "a", "value": "b"}}}]),
    "transform-map-bad-regex": pipeline([EXTRACT, {"id": "t", "type": "transform", "from": "extract",
                                                   "map": {"Code": {"values": {"([a-z]": "x"}, "regex": True}}}]),
    "transform-map-bad-otherwise": pipeline([EXTRACT, {"id": "t", "type": "transform", "from": "extract",
                                                       "map": {"Code": {"values": {"A": "B"}, "otherwise": "sometimes("}}}]),
    "transform-unknown-mask": pipeline([EXTRACT, {"id": "t", "type": "transform", "from": "extract", "mask": {"Name": "shoeSize"}}]),
    "transform-literal-mask-seed": pipeline([EXTRACT, {"id": "t", "type": "transform", "from": "extract", "mask": {"Name": "lastName"},
                                                       "maskSeed": "not-a-variable"}]),
    "transform-drop-and-keep": pipeline([EXTRACT, {"id": "t", "type": "transform", "from": "extract", "drop": ["a"], "keep": ["b"]}]),
    "transform-type-mismatch": pipeline([EXTRACT, {"id": "t", "type": "transform", "from": "extract", "set": {"X": "IF(TRUE, 1, \"a\")"}}]),
    "transform-lookup-no-match": pipeline([EXTRACT, {"id": "t", "type": "transform", "from": "extract",
                                                     "lookups": [{"field": "OwnerId", "sobjectType": "User"}]}]),
    "transform-lookup-bad-where": pipeline([EXTRACT, {"id": "t", "type": "transform", "from": "extract",
                                                      "lookups": [{"field": "OwnerId", "sobjectType": "User", "match": {"Email": "Owner"},
                                                                   "where": "IsActive = = true"}]}]),
    "transform-lookup-unset-bind": pipeline([EXTRACT, {"id": "t", "type": "transform", "from": "extract",
                                                       "lookups": [{"field": "OwnerId", "sobjectType": "User", "match": {"Email": "Owner"},
                                                                    "otherwise": ":NO_SUCH_VARIABLE"}]}]),
    "transform-lookup-bad-formula": pipeline([EXTRACT, {"id": "t", "type": "transform", "from": "extract",
                                                        "lookups": [{"field": "OwnerId", "sobjectType": "User", "match": {"Email": "LOWR(Owner)"}}]}]),
    "transform-lookup-not-array": pipeline([EXTRACT, {"id": "t", "type": "transform", "from": "extract",
                                                      "lookups": {"field": "OwnerId"}}]),
    "soup-bad-index-type": json.dumps({"name": "bad", "soups": [{"soupName": "A", "indexes": [{"path": "Id", "type": "text"}]}], "stages": [EXTRACT]}),
    "inline-sync-bad-type": json.dumps({"name": "bad", "soups": SOUPS, "syncs": [{"syncName": "s", "syncType": "sideways", "soupName": "Accounts", "target": {}}], "stages": [EXTRACT]}),
}
for name, text in structured.items():
    write("pipelines", name + ".fail.json", text)

# ---------------------------------------------------------------- CSV
HEAD = "Name,Phone\r\n"
csv_fail = {
    "empty": b"",
    "only-bom": b"\xef\xbb\xbf",
    "duplicate-header": "Name,Phone,Name\r\nAcme,1,Acme2\r\n",
    "duplicate-header-ignoring-case": "Name,Phone,NAME\r\nAcme,1,Acme2\r\n",
    "header-unclosed-quote": '"Name,Phone\r\nAcme,1\r\n',
    "header-quote-inside": 'Na"me,Phone\r\nAcme,1\r\n',
    "header-invalid-utf8": b"Na\xffme,Phone\r\nAcme,1\r\n",
    "header-text-after-quote": '"Name"x,Phone\r\nAcme,1\r\n',
}
for name, content in csv_fail.items():
    write("csv", name + ".fail.csv", content)
csv_reject = {
    "unclosed-quote-at-end": HEAD + 'Acme,1\r\n"Globex,2\r\n',
    "quote-inside-unquoted-field": HEAD + 'Ac"me,1\r\nGlobex,2\r\n',
    "text-after-closing-quote": HEAD + '"Acme"Corp,1\r\nGlobex,2\r\n',
    "too-many-columns": HEAD + "Acme,1,extra\r\nGlobex,2\r\n",
    "too-few-columns": HEAD + "Acme\r\nGlobex,2\r\n",
    "invalid-utf8-in-row": HEAD.encode() + b"Ac\xc3\x28me,1\r\nGlobex,2\r\n",
    "overlong-utf8": HEAD.encode() + b"Ac\xc0\xafme,1\r\nGlobex,2\r\n",
    "nul-in-quoted-multiline": HEAD + 'Acme,1\r\n"Glo\nbex"x,2\r\nInitech,3\r\n',
    "many-bad-rows": HEAD + "".join(f'Bad{i}",{i}\r\n' for i in range(50)) + "Good,1\r\n",
    "bad-row-after-long-field": HEAD + "A" * 100_000 + ",1\r\nB,2,3\r\nC,3\r\n",
    "lf-and-crlf-mixed-bad-row": "Name,Phone\nAcme,1\r\nGlo,bex,2\nInitech,3\n",
    "cr-only-line-ends-bad-row": "Name,Phone\rAcme,1\rGlo,bex,2\rInitech,3\r",
    "unclosed-quote-swallows-rest": HEAD + 'Acme,1\r\nGlobex,"2\r\nInitech,3\r\nUmbrella,4\r\n',
    "quote-then-delimiter-in-unquoted": HEAD + 'Acme",1\r\nGlobex,2\r\n',
    "bom-then-bad-row": b"\xef\xbb\xbf" + (HEAD + "Acme,1,2\r\nGlobex,2\r\n").encode(),
    "empty-lines-and-bad-row": HEAD + "\r\n\r\nAcme\r\nGlobex,2\r\n",
    "tab-delimited-by-mistake": "Name,Phone\r\nAcme\t1\r\nGlobex,2\r\n",
    "semicolon-delimited-by-mistake": "Name,Phone\r\nAcme;1\r\nGlobex,2\r\n",
    "trailing-delimiter-rows": HEAD + "Acme,1,\r\nGlobex,2\r\n",
    "latin1-bytes-in-utf8-file": HEAD.encode() + "Müller,1\r\n".encode("latin-1") + b"Globex,2\r\n",
    "utf16-row": HEAD.encode() + "Acme,1\r\n".encode("utf-16-le") + b"Globex,2\r\n",
    "control-characters-unquoted-quote": HEAD + 'Ac\x07me",1\r\nGlobex,2\r\n',
    "quoted-field-then-extra-column": HEAD + '"Acme, Inc.",1,x\r\nGlobex,2\r\n',
}
for name, content in csv_reject.items():
    write("csv", name + ".reject.csv", content)
csv_ok = {
    "double-bom": b"\xef\xbb\xbf\xef\xbb\xbf" + (HEAD + "Acme,1\r\n").encode(),
    "quoted-newlines": HEAD + '"Acme\r\nCorp",1\r\n',
    "no-final-newline": HEAD + "Acme,1",
}
for name, content in csv_ok.items():
    write("csv", name + ".ok.csv", content)

# ---------------------------------------------------------------- XML
def accounts(n):
    return "".join(f'<Account Id="A{i}"><Name>Acme {i}</Name></Account>\n' for i in range(n))
GOOD = '<?xml version="1.0" encoding="UTF-8"?>\n<Accounts>\n' + accounts(1000) + "</Accounts>\n"
xml_fail = {
    "empty": "",
    "whitespace-only": "  \n\n ",
    "declaration-only": '<?xml version="1.0"?>\n',
    "cut-in-half": GOOD[: len(GOOD) // 2],
    "cut-inside-tag": GOOD[: GOOD.index("<Account Id=\"A500\"") + 8],
    "cut-before-root-close": GOOD[: GOOD.rindex("</Accounts>")],
    "not-xml-but-csv": "Name,Phone\nAcme,1\n",
    "mismatched-tags": "<Accounts><Account><Name>Acme</Nmae></Account></Accounts>",
    "undefined-entity": "<Accounts><Account><Name>Acme &nbsp; Corp</Name></Account></Accounts>",
    "bare-ampersand": "<Accounts><Account><Name>Smith & Sons</Name></Account></Accounts>",
    "unquoted-attribute": "<Accounts><Account Id=A1><Name>Acme</Name></Account></Accounts>",
    "duplicate-attribute": '<Accounts><Account Id="A1" Id="A2"><Name>Acme</Name></Account></Accounts>',
    "two-roots": "<Accounts></Accounts><Accounts></Accounts>",
    "text-after-root": "<Accounts></Accounts>trailing",
    "control-character": "<Accounts><Account><Name>Ac\x01me</Name></Account></Accounts>",
    "invalid-utf8": b"<Accounts><Account><Name>Ac\xffme</Name></Account></Accounts>",
    "unclosed-comment": "<Accounts><!-- never closed <Account/></Accounts>",
    "unclosed-cdata": "<Accounts><Account><Name><![CDATA[Acme</Name></Account></Accounts>",
    "lt-in-attribute": '<Accounts><Account Id="<1>"/></Accounts>',
    "tag-starting-with-digit": "<Accounts><1Account/></Accounts>",
    "missing-root-close-many": "<Accounts><Account><Name>Acme</Name>",
    "bom-and-utf16-declaration": b"\xef\xbb\xbf" + b'<?xml version="1.0" encoding="UTF-16"?><Accounts/>',
    "deep-nesting": "<a>" * 5000 + "</a>" * 4999,
    "billion-laughs": '<?xml version="1.0"?><!DOCTYPE lolz [<!ENTITY lol "lol">'
        + "".join(f'<!ENTITY lol{i} "{("&lol" + (str(i - 1) if i > 1 else "") + ";") * 10}">' for i in range(1, 10))
        + ']><Accounts><Account><Name>&lol9;</Name></Account></Accounts>',
    "processing-instruction-after-cut": GOOD[:200] + "<?pi",
    "namespace-prefix-unbound": "<Accounts><sf:Account><Name>Acme</Name></sf:Account></Accounts>x<",
    "doctype-only": "<!DOCTYPE Accounts>",
    # Found by scripts/fuzz: Foundation's parser trapped on an element name with invalid UTF-8.
    "invalid-utf8-element-name": b"<A\xff\xffounts><Account><Nam</Name>",
    # Found by scripts/fuzz: an unknown declared encoding let invalid text reach the parser.
    "unknown-encoding": b'<?xml version="1.0" encoding="U-F8?T"?>\n<Accounts><Account Id="A\xff"><Name>Acme</Name></Account></Accounts>',
    "instruction-without-data": b"\xef\xbb\xbf<?xF?>u/>",
    "windows-1252-declared": b'<?xml version="1.0" encoding="windows-1252"?>\n<Accounts><Account><Name>Caf\xe9</Name></Account></Accounts>',
}
for name, content in xml_fail.items():
    write("xml", name + ".fail.xml", content)
write("xml", "latin1-declared.ok.xml", b'<?xml version="1.0" encoding="ISO-8859-1"?>\n<Accounts><Account><Name>Caf\xe9</Name></Account></Accounts>')
write("xml", "external-entity-not-fetched.ok.xml",
      '<?xml version="1.0"?><!DOCTYPE a [<!ENTITY ext SYSTEM "file:///etc/passwd">]><Accounts><Account Id="A1"><Name>Acme</Name></Account></Accounts>')

# ---------------------------------------------------------------- SOQL (one refused query a line)
soql = [
    "SELECT", "SELECT FROM Account", "SELECT Id FROM", "SELECT Id FROM Account WHERE",
    "SELECT Id FROM Account WHERE Name = 'unterminated", "SELECT Id, FROM Account", "SELECT Id FROM Account LIMIT -1",
    "SELECT Id FROM Account LIMIT abc", "SELECT Id FROM Account ORDER BY", "SELECT Id FROM Account WHERE Name LIKE",
    "SELECT Id FROM Account WHERE Id IN ()", "SELECT Id FROM Account WHERE Id IN ('a',)",
    "SELECT Id FROM Account WHERE CreatedDate > 2024-13-45T00:00:00Z", "SELECT Id FROM Account WHERE CreatedDate > LAST_N_DAYS:",
    "SELECT Id FROM Account WHERE CreatedDate > LAST_N_DAYS:-1", "SELECT Id FROM Account WHERE CreatedDate > NEXT_N_DAYS:abc",
    "SELECT (SELECT Id FROM Contacts FROM Account", "SELECT Id FROM Account WHERE (Name = 'a'",
    "SELECT Id FROM Account WHERE Name = 'a' AND", "SELECT COUNT( FROM Account", "SELECT Id FROM Account OFFSET",
    'SELECT Id FROM Account WHERE Name = "double"', "SELECT Id FROM Account WHERE Name = 'a' OR OR Name = 'b'",
    "SELECT Id FROM Account WHERE " + "(" * 2000 + "Name = 'a'" + ")" * 2000, "SELECT Id FROM Account WHERE Name == 'a'",
    "SELECT Id FROM Account WHERE Name = 'a' LIMIT 1 LIMIT 2", "SELECT Id FROM Account; DELETE FROM Account",
    "SELECT Id FROM Account WHERE Name = 'a\\q'", "SELECT Id FROM Account WHERE Amount > 1e", "SELECT Id FROM Account WHERE Name = 'a' ORDER BY Name SIDEWAYS",
    "SELECT Id FROM Account WHERE Name IN 'a'", "SELECT Id FROM Account WHERE Name = 'a' AND OR Name = 'b'",
    "SELECT Id FROM Account WHERE Name = 'naïve' AND ☃ = 1", "SELECT Id FROM Account WHERE CreatedDate > 2024-01-01T12:00:00.½Z",
]
write("soql", "refused.txt", "\n".join(soql) + "\n")

# ---------------------------------------------------------------- formulas (one refused formula a line)
formulas = [
    "LOWR(Email)", "LEN(1, 2)", "IF(TRUE, 1)", "CASE(x, 1, 'a')", "CASE(x, 1, 'a', 2, 'b')", "1 +", "(1 + 2", "1 2",
    "'unterminated", '"unterminated', "UPPER(1)", "1 + 'a'", "'a' & 1", "IF('x', 1, 2)", "IF(TRUE, 1, 'a')",
    "DATE(2024,1,1) + DATE(2024,1,1)", "1 < 'a'", "HYPERLINK('x', 'y')", "$User.Id", "", "   ", "1 @ 2", "/* open",
    "REGEX(x, '[')", "YEAR(NOW())", "Name..x", "ADDMONTHS(1, 2)", "f(", "1.2.3", "NOT 1", ",", ")", "ABS()", "TODAY(1)",
    "(" * 5000 + "1" + ")" * 5000, "TRUE + 1", "-'a'", "!1", "MAX()", "LEFT('a', 'b')", "a b c", "Name = = 'x'",
]
write("formulas", "refused.txt", "\n".join(formulas) + "\n")

# ---------------------------------------------------------------- seeds
ACCOUNT = {"name": "Account", "keyPrefix": "001", "fields": [{"name": "Name", "type": "string", "length": 255, "required": True}]}
USER = {"username": "u@example.com", "password": "p", "clientId": "c"}
def seed(objects=None, users=None, records=None):
    return json.dumps({"objects": objects if objects is not None else [ACCOUNT], "users": users if users is not None else [USER],
                       "records": records if records is not None else []}, indent=1)
def field(**f):
    return [{"name": "Account", "keyPrefix": "001", "fields": [dict({"name": "Name", "type": "string"}, **f)]}]
seeds = {
    "empty-file": "", "truncated": seed()[:40], "objects-not-array": seed(objects={"Account": ACCOUNT}),
    "object-without-name": seed(objects=[{"keyPrefix": "001", "fields": []}]),
    "object-bad-key-prefix": seed(objects=[{"name": "Account", "keyPrefix": "0001", "fields": []}]),
    "object-declared-twice": seed(objects=[ACCOUNT, ACCOUNT]),
    "field-declared-twice": seed(objects=[{"name": "Account", "keyPrefix": "001", "fields": [{"name": "Name", "type": "string"}, {"name": "name", "type": "string"}]}]),
    "field-unknown-type": seed(objects=field(type="text")), "field-length-negative": seed(objects=field(length=-1)),
    "field-length-string": seed(objects=field(length="255")), "field-length-huge": seed(objects=field(length=10**12)),
    "field-name-with-quote": seed(objects=field(name="Na'me")), "field-name-with-space": seed(objects=field(name="Account Name")),
    "field-unknown-key": seed(objects=field(lenght=10)), "reference-without-target": seed(objects=field(type="reference")),
    "reference-to-unknown-object": seed(objects=field(type="reference", referenceTo="Nope")),
    "relationship-invalid": seed(objects=field(type="reference", referenceTo="Account", relationship="sideways")),
    "picklist-values-not-strings": seed(objects=field(type="picklist", picklistValues=[1, 2])),
    "record-missing-required-field": seed(records=[{"type": "Account", "fields": {}}]),
    "record-required-field-null": seed(records=[{"type": "Account", "fields": {"Name": None}}]),
    "record-unknown-field": seed(records=[{"type": "Account", "fields": {"Name": "A", "Nope": 1}}]),
    "record-unknown-type": seed(records=[{"type": "Nope", "fields": {}}]),
    "record-ref-to-later-key": seed(records=[{"type": "Account", "fields": {"Name": {"$ref": "later"}}}, {"key": "later", "type": "Account", "fields": {"Name": "B"}}]),
    "record-duplicate-key": seed(records=[{"key": "k", "type": "Account", "fields": {"Name": "A"}}, {"key": "k", "type": "Account", "fields": {"Name": "B"}}]),
    "records-not-array": seed(records={"a": 1}), "user-missing-password": seed(users=[{"username": "u", "clientId": "c"}]),
    "user-unknown-key": seed(users=[dict(USER, passwrd="x")]), "user-security-token-number": seed(users=[dict(USER, securityToken=123)]),
}
for name, text in seeds.items():
    write("seeds", name + ".fail.json", text)
