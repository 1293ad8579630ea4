import Foundation
#if canImport(Glibc)
import Glibc
#endif

/// An exclusive OS lock on `<store>.lock`, so two runs can never work on one store at once.
///
/// It is a `flock(2)` lock: the kernel releases it when the process dies, so a killed run leaves no
/// stale lock behind. The lock is held until ``release()`` or until the value is deinitialized.
public final class StoreLock: Sendable {
    /// The lock file's path.
    public let path: String
    private let descriptor: Int32

    /// Takes the lock for the store at `storePath`, or throws ``SoupStoreError/storeLocked(_:)``
    /// at once when another process (or another lock in this one) holds it.
    public init(storePath: String) throws {
        path = storePath + ".lock"
        let directory = (path as NSString).deletingLastPathComponent
        do {
            try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true, attributes: [.posixPermissions: 0o700])
        } catch {
            let underlying = (error as NSError).userInfo[NSUnderlyingErrorKey] as? NSError
            let reason = underlying.flatMap { $0.domain == NSPOSIXErrorDomain ? String(cString: strerror(Int32($0.code))) : nil }
            throw SoupStoreError.lockUnavailable(path: path, reason: "its folder \(directory) cannot be created\(reason.map { ": \($0)" } ?? "")")
        }
        let fd = open(path, O_RDWR | O_CREAT | O_CLOEXEC, 0o600)
        guard fd >= 0 else {
            throw SoupStoreError.lockUnavailable(path: path, reason: String(cString: strerror(errno)))
        }
        guard flock(fd, LOCK_EX | LOCK_NB) == 0 else {
            close(fd)
            throw SoupStoreError.storeLocked(storePath)
        }
        descriptor = fd
    }

    /// Releases the lock.
    public func release() {
        flock(descriptor, LOCK_UN)
    }

    deinit {
        close(descriptor)
    }
}
