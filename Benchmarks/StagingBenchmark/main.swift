// StagingBenchmark: the extract → stage path at scale. Generates a CSV of N rows (default
// 1,000,000) and an XML file of about M megabytes (default 100), then runs, in this process:
//   1. extract.csv → stage into a soup (3 string indexes),
//   2. the same again (every row matches an entry),
//   3. extract.xml into a dataset,
// and prints rows/second and peak resident memory after each.
//
//   swift run -c release StagingBenchmark [--rows N] [--xml-mb M] [--smoke]
//
// The transform bar (issue 51) is `scripts/bench-transform.py`: each load in a process of its own.

import CJemalloc
import Foundation
import JSON
import Soups
import Stages

// jemalloc is linked (`import CJemalloc`) as in `pipeline`, so the figures are the product's.

var rows = 1_000_000
var xmlMegabytes = 100
var arguments = CommandLine.arguments.dropFirst().makeIterator()
while let argument = arguments.next() {
    switch argument {
    case "--rows": rows = Int(arguments.next() ?? "") ?? rows
    case "--xml-mb": xmlMegabytes = Int(arguments.next() ?? "") ?? xmlMegabytes
    case "--smoke": (rows, xmlMegabytes) = (5_000, 1)
    default:
        FileHandle.standardError.write(Data("usage: StagingBenchmark [--rows N] [--xml-mb M] [--smoke]\n".utf8))
        exit(2)
    }
}

/// Peak resident set size of this process so far, in MB.
func peakMegabytes() -> Double {
    var usage = rusage()
    getrusage(RUSAGE_SELF.rawValue, &usage)
    return Double(usage.ru_maxrss) / 1024
}

let folder = NSTemporaryDirectory() + "staging-benchmark-\(UUID().uuidString)"
try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
defer { try? FileManager.default.removeItem(atPath: folder) }

// The CSV: a quoted field with a comma in a third of the rows.
let csvPath = folder + "/accounts.csv"
_ = FileManager.default.createFile(atPath: csvPath, contents: nil)
let csv = FileHandle(forWritingAtPath: csvPath)!
csv.write(Data("Name,Industry,City,Employees,Description\n".utf8))
var chunk = ""
for index in 0..<rows {
    chunk += "Account \(index),Technology,City \(index % 97),\(index % 5000),"
    chunk += index % 3 == 0 ? "\"Plain, with a comma\"\n" : "Plain text\n"
    if chunk.utf8.count > 1 << 20 { csv.write(Data(chunk.utf8)); chunk = "" }
}
csv.write(Data(chunk.utf8))
try csv.close()

// The XML: accounts with two contacts each until the file reaches the size asked.
let xmlPath = folder + "/accounts.xml"
_ = FileManager.default.createFile(atPath: xmlPath, contents: nil)
let xml = FileHandle(forWritingAtPath: xmlPath)!
xml.write(Data("<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n<Accounts>\n".utf8))
var written = 0
var xmlRecords = 0
chunk = ""
while written < xmlMegabytes << 20 {
    chunk += "<Account id=\"A\(xmlRecords)\"><Name>Account &amp; \(xmlRecords)</Name><Industry>Energy</Industry><Contacts>"
    chunk += "<Contact><LastName>One \(xmlRecords)</LastName></Contact><Contact><LastName>Two \(xmlRecords)</LastName></Contact></Contacts></Account>\n"
    xmlRecords += 1
    if chunk.utf8.count > 1 << 20 { written += chunk.utf8.count; xml.write(Data(chunk.utf8)); chunk = "" }
}
xml.write(Data((chunk + "</Accounts>\n").utf8))
try xml.close()

let soups = #"[{"soupName": "AccountSoup", "indexes": [{"path": "Id", "type": "string"}, {"path": "Name", "type": "string"}, {"path": "City", "type": "string"}]}]"#
func runPipeline(_ name: String, _ stages: String) async throws -> (RunOutcome, Double) {
    let path = folder + "/\(name).json"
    try "{ \"name\": \"\(name)\", \"store\": \"\(folder)/\(name).sqlite\", \"soups\": \(soups), \"stages\": \(stages) }"
        .write(toFile: path, atomically: true, encoding: .utf8)
    let pipeline = try PipelineLoader(variables: VariableResolver(variables: [:])).load(path: path)
    struct Silent: RunObserver { func handle(_ event: RunEvent, at date: Date) {} }
    let started = ContinuousClock.now
    let outcome = try await PipelineRunner(pipeline: pipeline, observer: Silent()).run()
    let elapsed = ContinuousClock.now - started
    return (outcome, Double(elapsed.components.seconds) + Double(elapsed.components.attoseconds) / 1e18)
}

print("StagingBenchmark")
let csvStages = """
    [ { "id": "csv", "type": "extract.csv", "file": "\(csvPath)", "sobjectType": "Account", "types": {"Employees": "integer"} },
      { "id": "stage", "type": "stage", "from": "csv", "soup": "AccountSoup", "matchOn": "Name" } ]
    """
let (csvOutcome, csvSeconds) = try await runPipeline("csv", csvStages)
let staged = csvOutcome.report.stages.last?.counts["created"] ?? 0
print(String(format: "  CSV %d rows → soup: %.1f s, %.0f rows/s end to end; peak RSS %.0f MB (exit %d, created %d)",
             rows, csvSeconds, Double(rows) / csvSeconds, peakMegabytes(), csvOutcome.exitCode, staged))
for stage in csvOutcome.report.stages {
    print(String(format: "    %@: %.1f s", stage.id, Double(stage.durationMs) / 1000))
}
// The same file again into the same soup: every row matches an entry (a nightly re-load).
let (againOutcome, againSeconds) = try await runPipeline("csv", csvStages)
let unchanged = againOutcome.report.stages.last?.counts["unchanged"] ?? 0
// Both loads run in this process: the peak is the process's so far (`scripts/bench-scale.py`
// measures a re-load in a process of its own).
print(String(format: "  again, every row matched: %.1f s, %.0f rows/s; peak RSS of both loads %.0f MB (exit %d, unchanged %d)",
             againSeconds, Double(rows) / againSeconds, peakMegabytes(), againOutcome.exitCode, unchanged))
let (xmlOutcome, xmlSeconds) = try await runPipeline("xml", """
    [ { "id": "xml", "type": "extract.xml", "file": "\(xmlPath)", "record": "Account", "sobjectType": "Account",
        "children": [{"element": "Contact", "within": "Contacts", "sobjectType": "Contact"}] } ]
    """)
print(String(format: "  XML %d MB, %d records → dataset: %.1f s, %.0f records/s; peak RSS %.0f MB (exit %d)",
             xmlMegabytes, xmlRecords, xmlSeconds, Double(xmlRecords) / xmlSeconds, peakMegabytes(), xmlOutcome.exitCode))
if csvOutcome.exitCode != 0 || againOutcome.exitCode != 0 || xmlOutcome.exitCode != 0 || staged != rows || unchanged != rows { exit(1) }
