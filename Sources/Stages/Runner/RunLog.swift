import Foundation
import Synchronization

/// Sends a run's events to its observer and to `run.log` in the report directory, redacted.
final class RunLog: Sendable {
    private let observer: any RunObserver
    private let redactor: Redactor
    private let file: Mutex<FileHandle?>

    init(directory: String, observer: any RunObserver, redactor: Redactor) {
        self.observer = observer
        self.redactor = redactor
        try? PrivateFiles.createDirectory(directory)
        let path = (directory as NSString).appendingPathComponent("run.log")
        PrivateFiles.createFile(path)
        file = Mutex(FileHandle(forWritingAtPath: path))
    }

    func emit(_ event: RunEvent) {
        let event = redacted(event)
        let date = Date()
        observer.handle(event, at: date)
        let line = Timestamp.iso8601(date) + " " + event.text + "\n"
        file.withLock { handle in handle?.write(Data(line.utf8)) }
    }

    func close() {
        file.withLock { handle in
            try? handle?.close()
            handle = nil
        }
    }

    private func redacted(_ event: RunEvent) -> RunEvent {
        switch event {
        case .log(let level, let stage, let message):
            return .log(level: level, stage: stage, message: redactor.redact(message))
        case .stageFinished(let stage, let status, let counts, let durationMs, let error):
            return .stageFinished(stage: stage, status: status, counts: counts, durationMs: durationMs, error: error.map(redactor.redact))
        default:
            return event
        }
    }
}
