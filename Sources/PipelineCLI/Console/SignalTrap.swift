import Dispatch
import Foundation
import Stages

/// Calls a handler on SIGINT / SIGTERM (with exit code 130 / 143) for as long as it lives.
package final class SignalTrap {
    private let sources: [DispatchSourceSignal]

    package init(_ handler: @escaping @Sendable (Int32) -> Void) {
        sources = [(SIGINT, Int32(130)), (SIGTERM, Int32(143))].map { signalNumber, exitCode in
            signal(signalNumber, SIG_IGN)
            let source = DispatchSource.makeSignalSource(signal: signalNumber, queue: .global())
            source.setEventHandler { handler(exitCode) }
            source.resume()
            return source
        }
    }

    /// Turns the signals into a stop request of a run.
    convenience init(control: RunControl) {
        self.init { exitCode in control.requestStop(exitCode: exitCode) }
    }

    package func cancel() {
        for source in sources { source.cancel() }
    }
}
