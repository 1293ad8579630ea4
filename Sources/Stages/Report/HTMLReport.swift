import Foundation

/// `report.html`: one self-contained page (no script, no network) — status and what needs
/// attention, records by object as stacked bars, the stages and their timeline, the failed records and rejected
/// rows (first ``ReportDetails/limit`` of each file, linked to the full CSV), API requests by kind
/// against the daily limit, and links to every file of the run.
struct HTMLReport {
    let summary: ReportSummary

    /// Bar colours per outcome.
    static let colours: [String: String] = [
        StageCounts.created: "#2e7d32", StageCounts.updated: "#1565c0", StageCounts.deleted: "#616161",
        StageCounts.ghostsRemoved: "#8d6e63", StageCounts.unchanged: "#b0bec5", StageCounts.read: "#4db6ac", StageCounts.filtered: "#90a4ae",
        StageCounts.conflicts: "#f9a825", StageCounts.failed: "#c62828", StageCounts.rejected: "#ef6c00",
        StageCounts.uncertain: "#6a1b9a",
    ]

    func render() -> String {
        let report = summary.report
        var body = ""
        body += "<header><h1>\(e(report.pipeline)) <small>run \(e(report.runId))\(report.dryRun ? " · dry run" : "")</small></h1>\n"
        body += "<p><span class=\"badge \(report.status.rawValue)\">\(report.status.rawValue)</span> exit \(report.exitCode) · started \(e(report.startedAt))"
            + " · finished \(e(report.finishedAt)) · \(ReportSummary.duration(summary.runMs))</p>\n"
        if let error = report.error { body += "<p class=\"error\">\(e(error))</p>\n" }
        body += "</header>\n" + tiles() + objects() + timeline() + failures() + rejects() + api() + files()
        return """
            <!doctype html>
            <html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width">
            <title>\(e(report.pipeline)) · \(e(report.runId)) · \(report.status.rawValue)</title>
            <style>
            body{font:14px/1.45 system-ui,-apple-system,"Segoe UI",sans-serif;margin:0 auto;max-width:1280px;padding:1.5em;color:#212121}
            h1{margin:.2em 0;font-size:1.6em}h1 small{font-weight:normal;color:#666;font-size:.6em}h2{margin-top:1.8em;border-bottom:1px solid #ddd;padding-bottom:.2em}
            table{border-collapse:collapse;width:100%}td,th{border-bottom:1px solid #eee;padding:4px 8px;text-align:left;vertical-align:top}
            th{background:#fafafa;font-weight:600}td.n,th.n{text-align:right;font-variant-numeric:tabular-nums;white-space:nowrap}
            .badge{display:inline-block;padding:2px 10px;border-radius:10px;color:#fff;font-weight:600}
            .succeeded{background:#2e7d32}.partial{background:#f9a825}.failed{background:#c62828}.stopped,.skipped{background:#757575}
            .error{color:#c62828}.tiles{display:flex;flex-wrap:wrap;gap:12px;margin:1em 0}
            .tile{border:1px solid #ddd;border-radius:6px;padding:10px 16px;min-width:120px}.tile b{display:block;font-size:1.5em}
            .tile.bad b{color:#c62828}.bar{display:flex;height:18px;background:#f5f5f5;border-radius:3px;overflow:hidden;min-width:300px}
            .bar span{display:block;height:100%}.track{position:relative;height:18px;background:#f5f5f5;min-width:120px}
            .track span{position:absolute;top:0;height:100%;border-radius:2px}.legend span{display:inline-block;margin-right:14px}
            .legend i{display:inline-block;width:10px;height:10px;margin-right:4px;border-radius:2px}
            code{background:#f5f5f5;padding:0 3px}td.msg{max-width:420px;word-break:break-word}
            </style></head>
            <body>
            \(body)</body></html>

            """
    }

    private func e(_ text: String) -> String {
        text.replacingOccurrences(of: "&", with: "&amp;").replacingOccurrences(of: "<", with: "&lt;")
            .replacingOccurrences(of: ">", with: "&gt;").replacingOccurrences(of: "\"", with: "&quot;")
    }

    private func link(_ file: String) -> String {
        let href = file.split(separator: "/").map { $0.addingPercentEncoding(withAllowedCharacters: .urlPathAllowed) ?? String($0) }.joined(separator: "/")
        return "<a href=\"\(e(href))\">\(e(file))</a>"
    }

    private func tiles() -> String {
        let report = summary.report
        var tiles = ["<div class=\"tile\"><b>\(ReportSummary.duration(summary.runMs))</b>run time</div>",
                     "<div class=\"tile\"><b>\(report.stages.count)</b>stages</div>"]
        for name in [StageCounts.created, StageCounts.updated, StageCounts.deleted] {
            let total = summary.objectLines.reduce(0) { $0 + ($1.outcomes.first { $0.name == name }?.count ?? 0) }
            if total > 0 { tiles.append("<div class=\"tile\"><b>\(ReportSummary.number(total))</b>records \(name)</div>") }
        }
        for problem in summary.problemTotals {
            tiles.append("<div class=\"tile bad\"><b>\(ReportSummary.number(problem.count))</b>\(problem.name)</div>")
        }
        if summary.problemTotals.isEmpty { tiles.append("<div class=\"tile\"><b>0</b>problems</div>") }
        tiles.append("<div class=\"tile\"><b>\(ReportSummary.number(report.api.requests))</b>API requests</div>")
        return "<section class=\"tiles\">" + tiles.joined() + "</section>\n"
    }

    private func legend(_ names: [String]) -> String {
        "<p class=\"legend\">" + names.map { "<span><i style=\"background:\(Self.colours[$0] ?? "#999")\"></i>\($0)</span>" }.joined() + "</p>\n"
    }

    private func objects() -> String {
        let lines = summary.objectLines
        guard !lines.isEmpty else { return "" }
        let widest = max(1, lines.map(\.total).max() ?? 1)
        var html = "<h2>Records by object</h2>\n"
        html += legend(ReportSummary.outcomeOrder.filter { name in lines.contains { $0.outcomes.contains { $0.name == name } } })
        html += "<table><thead><tr><th>stage</th><th>object</th><th class=\"n\">records</th><th>outcome</th><th></th><th>errors</th></tr></thead><tbody>\n"
        for line in lines {
            var bar = "<div class=\"bar\" style=\"width:\(max(4, line.total * 100 / widest))%\">"
            for outcome in line.outcomes {
                let share = Double(outcome.count) * 100 / Double(max(1, line.total))
                bar += "<span title=\"\(outcome.name) \(outcome.count)\" style=\"width:\(String(format: "%.2f", share))%;background:\(Self.colours[outcome.name] ?? "#999")\"></span>"
            }
            bar += "</div>"
            let text = line.outcomes.map { "\(ReportSummary.number($0.count)) \($0.name)" }.joined(separator: ", ")
            let errors = line.outcomes.contains { ReportSummary.problems.contains($0.name) } ? summary.errorFile(of: line.object).map(link) ?? "" : ""
            html += "<tr><td>\(e(line.stage))</td><td>\(e(line.object))</td><td class=\"n\">\(ReportSummary.number(line.total))</td>"
                + "<td>\(text.isEmpty ? "nothing to do" : e(text))</td><td style=\"width:40%\">\(bar)</td><td>\(errors)</td></tr>\n"
        }
        return html + "</tbody></table>\n"
    }

    private func timeline() -> String {
        let report = summary.report
        let columns = ReportWriter.countColumns(report)
        var table = "<h2>Stages</h2>\n<div style=\"overflow-x:auto\"><table><thead><tr><th>stage</th><th>type</th><th>status</th>"
            + columns.map { "<th class=\"n\">\($0)</th>" }.joined() + "<th class=\"n\">time</th></tr></thead><tbody>\n"
        var bars = "<h2>Timeline</h2>\n<table><tbody>\n"
        for stage in report.stages {
            table += "<tr><td style=\"white-space:nowrap\">\(e(stage.id))</td><td>\(e(stage.type))</td><td><span class=\"badge \(stage.status.rawValue)\">\(stage.status.rawValue)</span></td>"
                + columns.map { "<td class=\"n\">\(stage.counts[$0].map(ReportSummary.number) ?? "")</td>" }.joined()
                + "<td class=\"n\">\(ReportSummary.duration(stage.durationMs))</td></tr>\n"
            if let error = stage.error {
                table += "<tr><td></td><td colspan=\"\(columns.count + 3)\" class=\"error\">\(e(error))</td></tr>\n"
            }
            let left = Double(stage.startedMs) * 100 / Double(summary.runMs)
            let width = max(0.5, Double(stage.durationMs) * 100 / Double(summary.runMs))
            let colour = stage.status == .failed ? "#c62828" : stage.status == .partial ? "#f9a825" : stage.status == .skipped ? "#bdbdbd" : "#1565c0"
            bars += "<tr><td style=\"white-space:nowrap;width:1%\">\(e(stage.id))</td><td><div class=\"track\"><span title=\"starts at \(stage.startedMs) ms, runs \(stage.durationMs) ms\" "
                + "style=\"left:\(String(format: "%.2f", left))%;width:\(String(format: "%.2f", min(width, 100 - left)))%;background:\(colour)\"></span></div></td>"
                + "<td class=\"n\" style=\"width:1%\">\(ReportSummary.duration(stage.startedMs)) + \(ReportSummary.duration(stage.durationMs))</td></tr>\n"
        }
        return table + "</tbody></table></div>\n" + bars + "</tbody></table>\n"
    }

    private func failures() -> String {
        let details = summary.details
        guard !details.failures.isEmpty else { return "" }
        var html = "<h2>Failed records</h2>\n<ul>"
        for (file, total) in details.failureTotals.sorted(by: { $0.key < $1.key }) {
            let shown = min(total, ReportDetails.limit)
            html += "<li>\(link(file)): \(ReportSummary.number(total)) record\(total == 1 ? "" : "s")\(shown < total ? " (the first \(shown) below)" : "")</li>"
        }
        html += "</ul>\n<table><thead><tr><th>object</th><th>stage</th><th>operation</th><th>local id</th><th>error</th><th>message</th></tr></thead><tbody>\n"
        for failure in details.failures {
            html += "<tr><td>\(e(failure.object))</td><td>\(e(failure.stage))</td><td>\(e(failure.operation))</td><td><code>\(e(failure.localId))</code></td>"
                + "<td><code>\(e(failure.errorCode))</code></td><td class=\"msg\">\(e(failure.message))</td></tr>\n"
        }
        return html + "</tbody></table>\n"
    }

    private func rejects() -> String {
        let details = summary.details
        guard !details.rejects.isEmpty else { return "" }
        var html = "<h2>Rejected rows</h2>\n<ul>"
        for (file, total) in details.rejectTotals.sorted(by: { $0.key < $1.key }) {
            html += "<li>\(link(file)): \(ReportSummary.number(total)) row\(total == 1 ? "" : "s")</li>"
        }
        html += "</ul>\n<table><thead><tr><th>stage</th><th class=\"n\">line</th><th>reason</th></tr></thead><tbody>\n"
        for reject in details.rejects {
            html += "<tr><td>\(e(reject.stage))</td><td class=\"n\">\(e(reject.line))</td><td class=\"msg\">\(e(reject.reason))</td></tr>\n"
        }
        return html + "</tbody></table>\n"
    }

    private func api() -> String {
        let report = summary.report
        var html = "<h2>API requests</h2>\n<p>\(ReportSummary.number(report.api.requests)) requests, \(report.api.retries) retries"
        if let limit = summary.limit {
            let share = Double(limit.used) * 100 / Double(max(1, limit.allowed))
            html += " · daily limit: \(ReportSummary.number(limit.used)) of \(ReportSummary.number(limit.allowed)) used (\(String(format: "%.1f", share))%)</p>\n"
            html += "<div class=\"bar\" title=\"daily limit used\"><span style=\"width:\(String(format: "%.2f", min(100, share)))%;background:\(share > 80 ? "#c62828" : "#1565c0")\"></span></div>\n"
        } else {
            html += "</p>\n"
        }
        guard !report.api.byKind.isEmpty else { return html }
        let most = max(1, report.api.byKind.values.max() ?? 1)
        html += "<table><thead><tr><th>kind</th><th class=\"n\">requests</th><th></th></tr></thead><tbody>\n"
        for (kind, count) in report.api.byKind.sorted(by: { ($1.value, $0.key) < ($0.value, $1.key) }) {
            html += "<tr><td>\(e(kind))</td><td class=\"n\">\(ReportSummary.number(count))</td><td style=\"width:60%\"><div class=\"bar\">"
                + "<span style=\"width:\(count * 100 / most)%;background:#4db6ac\"></span></div></td></tr>\n"
        }
        return html + "</tbody></table>\n"
    }

    private func files() -> String {
        let files = summary.details.files
        guard !files.isEmpty else { return "" }
        return "<h2>Files</h2>\n<ul>" + files.map { "<li>\(link($0))</li>" }.joined() + "</ul>\n"
    }
}
