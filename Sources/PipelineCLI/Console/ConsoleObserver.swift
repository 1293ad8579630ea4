import Foundation
import Stages
import Synchronization

/// Renders run events on stderr: progress bars on a terminal, one plain line per step otherwise,
/// or one JSON object per line with `--log-format json`.
final class ConsoleObserver: RunObserver {
    enum Format: String {
        case text, json
    }

    private let format: Format
    private let quiet: Bool
    private let terminal: Bool
    /// Whether a progress bar is on the current terminal line.
    private let barShown = Mutex(false)

    init(format: Format, quiet: Bool, terminal: Bool = Console.stderrIsTerminal) {
        self.format = format
        self.quiet = quiet
        self.terminal = terminal
    }

    func handle(_ event: RunEvent, at date: Date) {
        // Quiet keeps errors; in JSON, also the run's final event, so a log collector sees every run end.
        if quiet && !Self.isError(event) && !(format == .json && Self.isRunEnd(event)) { return }
        if format == .json {
            Console.error(event.jsonLine(at: date))
            return
        }
        if terminal, case .progress(let stage, let sync, let status, let progress, let totalSize) = event {
            let width = 30
            let filled = max(0, min(width, progress * width / 100))
            let bar = String(repeating: "█", count: filled) + String(repeating: "░", count: width - filled)
            let size = totalSize >= 0 ? " of \(totalSize)" : ""
            Console.errorRaw("\r\u{1B}[2K[\(stage)] \(sync.map { "\($0) " } ?? "")\(bar) \(progress)%\(size) \(status)")
            barShown.withLock { $0 = true }
            return
        }
        if terminal, case .work(let stage, let done, let total, let unit, let rate) = event {
            var line = "[\(stage)] "
            if let total, total > 0 {
                let width = 30
                let filled = Int(max(0, min(Int64(width), done * Int64(width) / total)))
                line += String(repeating: "█", count: filled) + String(repeating: "░", count: width - filled) + " "
            }
            Console.errorRaw("\r\u{1B}[2K" + line + RunEvent.describeWork(done: done, total: total, unit: unit, rate: rate))
            barShown.withLock { $0 = true }
            return
        }
        let clear = barShown.withLock { shown in
            defer { shown = false }
            return shown
        }
        if clear { Console.errorRaw("\r\u{1B}[2K") }
        Console.error(event.text)
    }

    static func isRunEnd(_ event: RunEvent) -> Bool {
        if case .runFinished = event { return true }
        return false
    }

    static func isError(_ event: RunEvent) -> Bool {
        switch event {
        case .log(let level, _, _): return level == .error
        case .stageFinished(_, let status, _, _, _): return status == .failed
        default: return false
        }
    }
}
