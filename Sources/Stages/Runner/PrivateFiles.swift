import Foundation

/// Files and folders the product writes hold customer data, so they are created readable by their
/// owner only (0600 / 0700) whatever the process's umask.
enum PrivateFiles {
    /// Creates `path` and its missing parents as owner-only folders.
    static func createDirectory(_ path: String) throws {
        try FileManager.default.createDirectory(atPath: path, withIntermediateDirectories: true, attributes: [.posixPermissions: 0o700])
    }

    /// Creates (or empties) an owner-only file; `false` when it cannot be created.
    @discardableResult
    static func createFile(_ path: String, contents: Data? = nil) -> Bool {
        FileManager.default.createFile(atPath: path, contents: contents, attributes: [.posixPermissions: 0o600])
    }

    /// Writes `data` to `path` atomically, owner-only.
    static func write(_ data: Data, to path: String) throws {
        try data.write(to: URL(fileURLWithPath: path), options: .atomic)
        try FileManager.default.setAttributes([.posixPermissions: 0o600], ofItemAtPath: path)
    }
}
