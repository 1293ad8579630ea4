import Foundation
import Synchronization

/// Foundation's `Process.run()` is not safe to call from several threads at once on Linux
/// (swift-corelibs-foundation #4772, #4795, #4810), and tests run in parallel: a CI run crashed
/// inside it. This module's launches go one at a time.
extension Process {
    private static let launches = Mutex(())

    func runSerialized() throws {
        try Self.launches.withLock { _ in try run() }
    }
}
