/// `report.md`: the run in text, for a CI log or a ticket — status, problems, records by object,
/// a stage timeline, the failed records and rejected rows (first ``ReportDetails/limit`` of each
/// file), API requests and the files written.
struct MarkdownReport {
    let summary: ReportSummary

    func render() -> String {
        let report = summary.report
        var lines = [
            "# \(report.pipeline) — run \(report.runId)\(report.dryRun ? " (dry run)" : "")", "",
            "Status: **\(report.status.rawValue)** (exit \(report.exitCode)) · started \(report.startedAt) · finished \(report.finishedAt)"
                + " · \(ReportSummary.duration(summary.runMs))", "",
        ]
        if let error = report.error { lines += ["Error: \(error)", ""] }
        let problems = summary.problemTotals
        lines.append(problems.isEmpty ? "No failed, rejected, conflicting or uncertain records."
                     : "Needs attention: " + problems.map { "\(ReportSummary.number($0.count)) \($0.name)" }.joined(separator: " · "))
        lines.append("")

        if !summary.objectLines.isEmpty {
            lines += ["## Records by object", "", "| stage | object | records | outcome | |", "|---|---|---:|---|---|"]
            let widest = summary.objectLines.map(\.total).max() ?? 1
            for line in summary.objectLines {
                let outcome = line.outcomes.map { "\(ReportSummary.number($0.count)) \($0.name)" }.joined(separator: ", ")
                let bar = String(repeating: "█", count: line.total == 0 ? 0 : max(1, line.total * 20 / max(1, widest)))
                lines.append("| \(line.stage) | \(line.object) | \(ReportSummary.number(line.total)) | \(outcome.isEmpty ? "nothing to do" : outcome) | `\(bar)` |")
            }
            lines.append("")
        }

        let columns = ReportWriter.countColumns(report)
        lines += ["## Stages", "",
                  "| stage | type | status | " + columns.joined(separator: " | ") + (columns.isEmpty ? "" : " | ") + "ms | timeline |",
                  "|" + Array(repeating: "---|", count: 5 + columns.count).joined()]
        for stage in report.stages {
            let counts = columns.map { stage.counts[$0].map(String.init) ?? "" }
            let start = stage.startedMs * 30 / summary.runMs
            let width = stage.status == .skipped && stage.durationMs == 0 ? 0 : max(1, stage.durationMs * 30 / summary.runMs)
            let timeline = String(repeating: "·", count: start) + String(repeating: "█", count: width)
            lines.append("| \(stage.id) | \(stage.type) | \(stage.status.rawValue) | " + counts.joined(separator: " | ") + (counts.isEmpty ? "" : " | ")
                         + "\(stage.durationMs) | `\(timeline)` |")
        }
        let errors = report.stages.filter { $0.error != nil }
        if !errors.isEmpty {
            lines += ["", "### Stage errors", ""]
            lines += errors.map { "- `\($0.id)`: \($0.error!)" }
        }

        let details = summary.details
        if !details.failures.isEmpty {
            lines += ["", "## Failed records", ""]
            for (file, total) in details.failureTotals.sorted(by: { $0.key < $1.key }) {
                let shown = min(total, ReportDetails.limit)
                lines.append("- [\(file)](\(file)): \(ReportSummary.number(total)) record\(total == 1 ? "" : "s")\(shown < total ? ", the first \(shown) below" : "")")
            }
            lines += ["", "| object | stage | operation | local id | error | message |", "|---|---|---|---|---|---|"]
            for failure in details.failures {
                lines.append("| \(failure.object) | \(failure.stage) | \(failure.operation) | \(Self.cell(failure.localId)) | \(failure.errorCode) | \(Self.cell(failure.message)) |")
            }
        }
        if !details.rejects.isEmpty {
            lines += ["", "## Rejected rows", ""]
            for (file, total) in details.rejectTotals.sorted(by: { $0.key < $1.key }) {
                lines.append("- [\(file)](\(file)): \(ReportSummary.number(total)) row\(total == 1 ? "" : "s")")
            }
            lines += ["", "| stage | line | reason |", "|---|---:|---|"]
            for reject in details.rejects { lines.append("| \(reject.stage) | \(reject.line) | \(Self.cell(reject.reason)) |") }
        }

        lines += ["", "## API requests", ""]
        var api = "\(ReportSummary.number(report.api.requests)) requests (\(report.api.retries) retries)"
        if let limit = summary.limit {
            api += " · daily limit: \(ReportSummary.number(limit.used)) of \(ReportSummary.number(limit.allowed)) used"
                + " (\(String(format: "%.1f", Double(limit.used) * 100 / Double(max(1, limit.allowed))))%)"
        }
        lines.append(api)
        if !report.api.byKind.isEmpty {
            lines += ["", "| kind | requests |", "|---|---:|"]
            for (kind, count) in report.api.byKind.sorted(by: { ($1.value, $0.key) < ($0.value, $1.key) }) { lines.append("| \(kind) | \(count) |") }
        }
        if !details.files.isEmpty {
            lines += ["", "## Files", ""]
            lines += details.files.map { "- [\($0)](\($0))" }
        }
        return lines.joined(separator: "\n") + "\n"
    }

    /// Text safe inside a table cell.
    static func cell(_ text: String) -> String {
        text.replacingOccurrences(of: "|", with: "\\|").replacingOccurrences(of: "\r", with: " ").replacingOccurrences(of: "\n", with: " ")
    }
}
