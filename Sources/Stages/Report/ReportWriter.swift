import Connectors
import Foundation
import Formats
import JSON

/// Writes a run's report files: `report.json` always, and `report.md`, `report.html` and
/// `stages.csv` when chosen. All formats are rendered from the same ``RunReport``, so their counts agree.
public struct ReportWriter: Sendable {
    /// The formats a report stage may choose.
    public static let formats = ["json", "md", "html", "csv"]

    public var directory: String
    public var formats: [String]

    public init(directory: String, formats: [String]) {
        self.directory = directory
        self.formats = formats
    }

    /// Writes the files; returns their paths.
    @discardableResult
    public func write(_ report: RunReport) throws -> [String] {
        try PrivateFiles.createDirectory(directory)
        var written: [String] = []
        func save(_ name: String, _ text: String) throws {
            let path = (directory as NSString).appendingPathComponent(name)
            try PrivateFiles.write(Data(text.utf8), to: path)
            written.append(path)
        }
        try save("report.json", report.json.prettyJSONString + "\n")
        if formats.contains("md") { try save("report.md", markdown(report)) }
        if formats.contains("html") { try save("report.html", html(report)) }
        if formats.contains("csv") { try save("stages.csv", csv(report)) }
        return written
    }

    /// Every count key used by any stage, in a fixed order (created, updated, …).
    static func countColumns(_ report: RunReport) -> [String] {
        let order = [StageCounts.read, StageCounts.created, StageCounts.updated, StageCounts.deleted, StageCounts.unchanged,
                     StageCounts.conflicts, StageCounts.failed, StageCounts.rejected, StageCounts.uncertain, StageCounts.ghostsRemoved]
        let used = Set(report.stages.flatMap { $0.counts.keys })
        return order.filter(used.contains) + used.subtracting(order).sorted()
    }

    func markdown(_ report: RunReport) -> String {
        let columns = Self.countColumns(report)
        var lines = [
            "# \(report.pipeline) — run \(report.runId)\(report.dryRun ? " (dry run)" : "")", "",
            "Status: **\(report.status.rawValue)** (exit \(report.exitCode)) · started \(report.startedAt) · finished \(report.finishedAt)", "",
        ]
        if let error = report.error { lines += ["Error: \(error)", ""] }
        lines.append("| stage | type | status | " + columns.joined(separator: " | ") + (columns.isEmpty ? "" : " | ") + "ms |")
        lines.append("|" + Array(repeating: "---|", count: 4 + columns.count).joined())
        for stage in report.stages {
            let counts = columns.map { stage.counts[$0].map(String.init) ?? "" }
            lines.append("| \(stage.id) | \(stage.type) | \(stage.status.rawValue) | " + counts.joined(separator: " | ") + (counts.isEmpty ? "" : " | ") + "\(stage.durationMs) |")
        }
        let errors = report.stages.filter { $0.error != nil }
        if !errors.isEmpty {
            lines += ["", "## Errors", ""]
            lines += errors.map { "- `\($0.id)`: \($0.error!)" }
        }
        lines += ["", "API requests: \(report.api.requests) (retries \(report.api.retries))"
                  + (report.api.byKind.isEmpty ? "" : " — " + report.api.byKind.sorted { $0.key < $1.key }.map { "\($0.key) \($0.value)" }.joined(separator: ", "))]
        return lines.joined(separator: "\n") + "\n"
    }

    func html(_ report: RunReport) -> String {
        func escape(_ text: String) -> String {
            text.replacingOccurrences(of: "&", with: "&amp;").replacingOccurrences(of: "<", with: "&lt;")
                .replacingOccurrences(of: ">", with: "&gt;").replacingOccurrences(of: "\"", with: "&quot;")
        }
        let columns = Self.countColumns(report)
        var rows = ""
        for stage in report.stages {
            rows += "<tr class=\"\(stage.status.rawValue)\"><td>\(escape(stage.id))</td><td>\(escape(stage.type))</td><td>\(stage.status.rawValue)</td>"
            rows += columns.map { "<td class=\"n\">\(stage.counts[$0].map(String.init) ?? "")</td>" }.joined()
            rows += "<td class=\"n\">\(stage.durationMs)</td><td>\(escape(stage.error ?? ""))</td></tr>\n"
        }
        return """
            <!doctype html>
            <html lang="en"><head><meta charset="utf-8"><title>\(escape(report.pipeline)) \(report.runId)</title>
            <style>body{font-family:system-ui,sans-serif;margin:2em}table{border-collapse:collapse}td,th{border:1px solid #ccc;padding:4px 8px}
            td.n{text-align:right}tr.failed{background:#fdd}tr.partial{background:#ffd}tr.skipped{color:#888}</style></head>
            <body><h1>\(escape(report.pipeline)) — run \(report.runId)\(report.dryRun ? " (dry run)" : "")</h1>
            <p>Status: <b>\(report.status.rawValue)</b> (exit \(report.exitCode)) · started \(report.startedAt) · finished \(report.finishedAt)</p>
            \(report.error.map { "<p>Error: \(escape($0))</p>" } ?? "")
            <table><thead><tr><th>stage</th><th>type</th><th>status</th>\(columns.map { "<th>\($0)</th>" }.joined())<th>ms</th><th>error</th></tr></thead>
            <tbody>
            \(rows)</tbody></table>
            <p>API requests: \(report.api.requests) (retries \(report.api.retries))</p>
            </body></html>

            """
    }

    func csv(_ report: RunReport) -> String {
        let columns = Self.countColumns(report)
        var lines = [(["stage", "type", "status", "durationMs"] + columns + ["error"]).joined(separator: ",")]
        for stage in report.stages {
            let fields = [stage.id, stage.type, stage.status.rawValue, String(stage.durationMs)]
                + columns.map { stage.counts[$0].map(String.init) ?? "" } + [stage.error ?? ""]
            lines.append(CSVLine.encode(fields))
        }
        return lines.joined(separator: "\r\n") + "\r\n"
    }
}
