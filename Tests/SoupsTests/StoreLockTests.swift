import ChildProcesses
import Foundation
import Testing

@testable import Soups

#if canImport(Glibc)
import Glibc
#endif

@Suite struct StoreLockTests {
    static func withStorePath(_ body: (String) async throws -> Void) async throws {
        let directory = try makeTemporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        try await body(directory.appendingPathComponent("store.sqlite").path)
    }

    @Test func aSecondLockOnTheSameStoreFails() async throws {
        try await Self.withStorePath { (path) async throws in
            let lock = try StoreLock(storePath: path)
            #expect(lock.path == path + ".lock")
            #expect(FileManager.default.fileExists(atPath: lock.path))
            #expect(throws: SoupStoreError.storeLocked(path)) { try StoreLock(storePath: path) }
            #expect(SoupStoreError.storeLocked(path).description == "\(path): another run holds this store")
            // Another store's lock is independent.
            let other = try StoreLock(storePath: path + "-other")
            withExtendedLifetime(other) {}
            withExtendedLifetime(lock) {}
        }
    }

    @Test func releaseFreesTheLock() async throws {
        try await Self.withStorePath { (path) async throws in
            let lock = try StoreLock(storePath: path)
            lock.release()
            let second = try StoreLock(storePath: path)
            #expect(throws: SoupStoreError.storeLocked(path)) { try StoreLock(storePath: path) }
            withExtendedLifetime(lock) {}
            withExtendedLifetime(second) {}
        }
    }

    @Test func deinitFreesTheLock() async throws {
        try await Self.withStorePath { (path) async throws in
            do {
                let lock = try StoreLock(storePath: path)
                #expect(throws: SoupStoreError.storeLocked(path)) { try StoreLock(storePath: path) }
                withExtendedLifetime(lock) {}
            }
            // A process another test spawns at this moment holds a copy of the descriptor until it
            // execs (a few microseconds), so the lock is free at once or very nearly.
            #expect(try await Self.eventually(2) { !Self.isLocked(path) }, "the lock outlived its owner")
            let again = try StoreLock(storePath: path)
            withExtendedLifetime(again) {}
        }
    }

    @Test func lockInANewDirectory() async throws {
        try await Self.withStorePath { (path) async throws in
            let nested = URL(fileURLWithPath: path).deletingLastPathComponent().appendingPathComponent("x/y/store.sqlite").path
            let lock = try StoreLock(storePath: nested)
            #expect(FileManager.default.fileExists(atPath: nested + ".lock"))
            withExtendedLifetime(lock) {}
        }
    }

    @Test func unopenableLockFileIsReported() async throws {
        try await Self.withStorePath { (path) async throws in
            // A directory where the lock file should be.
            try FileManager.default.createDirectory(atPath: path + ".lock", withIntermediateDirectories: true)
            let error = #expect(throws: SoupStoreError.self) { try StoreLock(storePath: path) }
            guard case .lockUnavailable(let lockPath, let reason)? = error else {
                Issue.record("expected lockUnavailable, got \(String(describing: error))")
                return
            }
            #expect(lockPath == path + ".lock")
            #expect(!reason.isEmpty)
        }
    }

    /// Polls `condition` every 20 ms for up to `seconds`.
    static func eventually(_ seconds: Double = 10, _ condition: () -> Bool) async throws -> Bool {
        let deadline = Date().addingTimeInterval(seconds)
        while Date() < deadline {
            if condition() { return true }
            try await Task.sleep(for: .milliseconds(20))
        }
        return condition()
    }

    static func isLocked(_ path: String) -> Bool {
        do {
            let lock = try StoreLock(storePath: path)
            withExtendedLifetime(lock) {}
            return false
        } catch SoupStoreError.storeLocked {
            return true
        } catch {
            return false
        }
    }

    @Test func aLockHeldByAKilledProcessIsReleased() async throws {
        try await Self.withStorePath { (path) async throws in
            let lockPath = path + ".lock"
            // The shell takes the lock on fd 9 with flock(1), then becomes `sleep`, which keeps fd 9:
            // one process holds the lock, as a pipeline run would.
            // `flock -w`: the probe below takes the lock for an instant while it polls.
            let process = try ChildProcess("/bin/sh", ["-c", #"exec 9>>"$0" && flock -w 10 9 && exec sleep 60"#, lockPath])
            defer { process.kill(); process.wait() }
            #expect(try await Self.eventually { Self.isLocked(path) }, "the child never took the lock")
            #expect(throws: SoupStoreError.storeLocked(path)) { try StoreLock(storePath: path) }
            #expect(process.poll() == nil, "the child ended")

            process.kill()
            #expect(process.wait() == .signalled(SIGKILL))
            #expect(try await Self.eventually { !Self.isLocked(path) }, "the lock outlived the process")
            let lock = try StoreLock(storePath: path)
            withExtendedLifetime(lock) {}
        }
    }

    @Test func aLockHeldHereBlocksAChildProcess() async throws {
        try await Self.withStorePath { (path) async throws in
            let lock = try StoreLock(storePath: path)
            #expect(try ChildProcess.run("/usr/bin/env", ["flock", "-n", lock.path, "true"]).termination == .exited(1))
            lock.release()
            #expect(try ChildProcess.run("/usr/bin/env", ["flock", "-n", lock.path, "true"]).termination == .exited(0))
        }
    }
}
