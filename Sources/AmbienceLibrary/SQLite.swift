import AmbiencePlatform
import CSQLite
import Glibc

/// Why a database operation failed. Every case names the database file; `description` reads as one line.
public enum SQLiteError: Error, CustomStringConvertible, Equatable, Sendable {
    /// The file could not be opened or created (missing folder, no permission, not a regular file).
    case cannotOpen(path: String, reason: String)
    /// The file is not a database or is damaged (`SQLITE_NOTADB`, `SQLITE_CORRUPT`, a failed `quick_check`).
    case corrupt(path: String, reason: String)
    /// Another connection held a lock for longer than the busy timeout (`SQLITE_BUSY`, `SQLITE_LOCKED`).
    case locked(path: String, reason: String)
    /// Any other failure of a statement: disk full, I/O error, a constraint.
    case failed(path: String, code: Int32, reason: String)

    /// The database file the error is about.
    public var path: String {
        switch self {
        case .cannotOpen(let p, _), .corrupt(let p, _), .locked(let p, _), .failed(let p, _, _): p
        }
    }

    public var description: String {
        switch self {
        case .cannotOpen(let path, let reason): "\(path): cannot open database (\(reason))"
        case .corrupt(let path, let reason): "\(path): database is damaged (\(reason))"
        case .locked(let path, let reason): "\(path): database is locked by another connection (\(reason))"
        case .failed(let path, _, let reason): "\(path): database error (\(reason))"
        }
    }

    /// Damage, and only damage: a lock held past the busy timeout (`.locked`) or a file that cannot be opened is
    /// never taken for it, so the file is never moved aside for either.
    var isDamage: Bool {
        if case .corrupt = self { return true }
        return false
    }

    /// A constraint refused one row (for the index, two paths whose 64-bit IDs collide): that row's failure alone.
    var isConstraint: Bool {
        if case .failed(_, let code, _) = self { return code & 0xFF == SQLITE_CONSTRAINT }
        return false
    }
}

/// A value bound to a statement parameter. Values only ever reach SQL this way, never by string interpolation.
enum SQLiteValue: Sendable, Equatable {
    case null
    case integer(Int64)
    case real(Double)
    case text(String)
    case blob([UInt8])

    static func optional(_ text: String?) -> SQLiteValue { text.map(SQLiteValue.text) ?? .null }
    static func optional(_ number: Int?) -> SQLiteValue { number.map { .integer(Int64($0)) } ?? .null }
    static func id(_ value: UInt64) -> SQLiteValue { .integer(Int64(bitPattern: value)) }
    static func bool(_ value: Bool) -> SQLiteValue { .integer(value ? 1 : 0) }
    /// A finite number, or NULL (SQLite would store NaN as NULL anyway, and infinities are no measurement).
    static func optional(_ number: Double?) -> SQLiteValue {
        number.flatMap { $0.isFinite ? SQLiteValue.real($0) : nil } ?? .null
    }
}

/// A connection to one SQLite database file. Owns the `sqlite3*` and its prepared statements; nothing else in the
/// project calls sqlite3.
///
/// A connection is used by one thread at a time (it is opened with `SQLITE_OPEN_NOMUTEX`); its owner serialises.
final class SQLiteDatabase {
    struct OpenFlags: OptionSet, Sendable {
        let rawValue: Int32
        static let readOnly = OpenFlags(rawValue: SQLITE_OPEN_READONLY)
        static let readWrite = OpenFlags(rawValue: SQLITE_OPEN_READWRITE)
        static let create = OpenFlags(rawValue: SQLITE_OPEN_CREATE)
    }

    let path: String
    private let handle: OpaquePointer
    /// The busy timeout: also the bound on retrying what SQLite's busy handler does not wait for (`isRetryable`).
    private let busyNanoseconds: Int
    /// Prepared statements by SQL text: each distinct statement is compiled once.
    private var statements: [String: SQLiteStatement] = [:]

    /// Opens (and with `.create`, creates) the database at `path`. `busyTimeout` is how long a statement waits for
    /// another connection's lock before failing with `.locked`: seconds, taken within `busyTimeouts` (NaN is none).
    init(path: String, flags: OpenFlags = [.readWrite, .create], busyTimeout: Double = 2) throws(SQLiteError) {
        var db: OpaquePointer?
        let status = sqlite3_open_v2(path, &db, flags.rawValue | SQLITE_OPEN_NOMUTEX, nil)
        guard status == SQLITE_OK, let db else {
            let reason = db.map { String(cString: sqlite3_errmsg($0)) } ?? Self.describe(status)
            sqlite3_close_v2(db)
            throw Self.error(status, reason: reason, path: path, opening: true)
        }
        self.path = path
        handle = db
        sqlite3_extended_result_codes(db, 0)
        sqlite3_busy_timeout(db, (busyTimeout * 1000).saturated(Int32.self))
        busyNanoseconds = (busyTimeout * 1e9).saturated(Int.self)
    }

    /// The busy timeouts SQLite can wait, in seconds: its timeout is a C `int` of milliseconds.
    static let busyTimeouts = 0...Double(Int32.max) / 1000

    deinit {
        statements.removeAll()  // finalize every statement before the connection closes
        sqlite3_close_v2(handle)
    }

    // MARK: Statements

    /// Runs SQL text that has no parameters: schema and pragmas. Several statements may be separated by `;`.
    func execute(_ sql: String) throws(SQLiteError) {
        var message: UnsafeMutablePointer<CChar>?
        let status = sqlite3_exec(handle, sql, nil, nil, &message)
        defer { sqlite3_free(message) }
        guard status == SQLITE_OK else {
            throw error(status, detail: message.map { String(cString: $0) })
        }
    }

    /// Runs one statement with bound values, discarding any rows. Returns the number of rows changed.
    @discardableResult
    func run(_ sql: String, _ values: [SQLiteValue] = []) throws(SQLiteError) -> Int {
        let statement = try prepare(sql)
        defer { statement.reset() }
        try statement.bind(values)
        while try statement.step() {}
        return Int(sqlite3_changes(handle))
    }

    /// Runs one query with bound values and calls `body` for each row.
    func query(_ sql: String, _ values: [SQLiteValue] = [], _ body: (SQLiteRow) throws(SQLiteError) -> Void)
        throws(SQLiteError)
    {
        let statement = try prepare(sql)
        defer { statement.reset() }
        try statement.bind(values)
        while try statement.step() { try body(SQLiteRow(statement: statement.handle)) }
    }

    /// The first column of the first row, as an integer (nil when there is no row or it is NULL).
    func integer(_ sql: String, _ values: [SQLiteValue] = []) throws(SQLiteError) -> Int64? {
        var result: Int64?
        try query(sql, values) { row in if result == nil { result = row.optionalInteger(0) } }
        return result
    }

    /// The first column of every row, as text.
    func texts(_ sql: String, _ values: [SQLiteValue] = []) throws(SQLiteError) -> [String] {
        var result: [String] = []
        try query(sql, values) { row in result.append(row.text(0) ?? "") }
        return result
    }

    /// The compiled statement for `sql`, reused across calls.
    private func prepare(_ sql: String) throws(SQLiteError) -> SQLiteStatement {
        if let cached = statements[sql] { return cached }
        var statement: OpaquePointer?
        let status = sqlite3_prepare_v3(handle, sql, -1, UInt32(SQLITE_PREPARE_PERSISTENT), &statement, nil)
        guard status == SQLITE_OK, let statement else {
            sqlite3_finalize(statement)
            throw error(status)
        }
        let prepared = SQLiteStatement(handle: statement, database: self)
        statements[sql] = prepared
        return prepared
    }

    // MARK: Transactions

    /// Runs `body` inside `BEGIN IMMEDIATE … COMMIT`; any error rolls back and is rethrown.
    func transaction<T>(_ body: () throws(SQLiteError) -> T) throws(SQLiteError) -> T {
        try run("BEGIN IMMEDIATE")
        do {
            let result = try body()
            try run("COMMIT")
            return result
        } catch {
            if sqlite3_get_autocommit(handle) == 0 { _ = try? run("ROLLBACK") }
            throw error
        }
    }

    // MARK: Health

    /// A rollback journal (`-journal`, deleted at each commit) and no memory map, ever. The index is a file other
    /// processes may truncate or replace; a page read through a map past its new end is SIGBUS, which kills the game,
    /// where `pread` gives an error. WAL would map its `-shm` index the same way (SQLite cannot read WAL without it),
    /// and a WAL reader writes its `-shm` and creates `-wal`; with a rollback journal a reader writes nothing. A
    /// reader then waits for a writer's commit (at most the busy timeout), which each batch of a scan keeps short.
    /// An index still in WAL from 0.2 is converted here; while another connection has it open it cannot be, and
    /// stays in WAL until a later open.
    func useRollbackJournal(cacheBytes: Int) throws(SQLiteError) {
        _ = try texts("PRAGMA journal_mode=DELETE")
        try noMemoryMap(cacheBytes: cacheBytes)
    }

    /// `mmap_size=0` (see `useRollbackJournal`), and up to `cacheBytes` of pages kept in memory between queries:
    /// with a rollback journal the cache survives as long as no one changes the file.
    func noMemoryMap(cacheBytes: Int) throws(SQLiteError) {
        _ = try texts("PRAGMA mmap_size=0")
        try execute("PRAGMA cache_size=-\(cacheBytes / 1024)")
    }

    /// `PRAGMA quick_check`: throws `.corrupt` with the first problem found.
    func quickCheck() throws(SQLiteError) {
        let result = try texts("PRAGMA quick_check")
        guard result == ["ok"] else {
            throw .corrupt(path: path, reason: "quick_check: " + (result.first ?? "no result"))
        }
    }

    /// Opens a database for reading only: nothing it does creates or changes a file (no journal, no `-wal`, no
    /// `-shm`, no schema), and no memory map (see `useRollbackJournal`).
    static func openForReading(path: String, busyTimeout: Double, cacheBytes: Int) throws(SQLiteError)
        -> SQLiteDatabase
    {
        let database = try SQLiteDatabase(path: path, flags: [.readOnly], busyTimeout: busyTimeout)
        try database.noMemoryMap(cacheBytes: cacheBytes)
        return database
    }

    /// Opens a cache database for writing, creating it when missing, and when the file is damaged or not a database
    /// (and only then), moves it aside to a name no other file has and creates a new one. A lock held past the busy
    /// timeout is `.locked`, a read-only file `.cannotOpen`: the file stays where it is.
    ///
    /// `prepare` creates the schema; it runs on the new file too. Returns the connection and, when the file was
    /// rebuilt, a sentence saying why and where the old file went.
    static func openForWriting(
        path: String, busyTimeout: Double, cacheBytes: Int,
        prepare: (SQLiteDatabase) throws(SQLiteError) -> Void
    ) throws(SQLiteError) -> (SQLiteDatabase, rebuilt: String?) {
        do {
            return (
                try openChecked(path: path, busyTimeout: busyTimeout, cacheBytes: cacheBytes, prepare: prepare), nil
            )
        } catch {
            // Only a regular file is moved aside: a folder or device at the path is the caller's mistake.
            let isFile = (try? FileStatus(path: path, followingLinks: false))?.isRegularFile ?? false
            guard isFile, error.isDamage, let aside = moveAside(path) else { throw error }
            let database = try openChecked(
                path: path, busyTimeout: busyTimeout, cacheBytes: cacheBytes, prepare: prepare)
            return (database, "\(error); the old file was moved to \(aside) and the index rebuilt")
        }
    }

    private static func openChecked(
        path: String, busyTimeout: Double, cacheBytes: Int,
        prepare: (SQLiteDatabase) throws(SQLiteError) -> Void
    ) throws(SQLiteError) -> SQLiteDatabase {
        let database = try SQLiteDatabase(path: path, busyTimeout: busyTimeout)
        // SQLite opens a file it may not write read-only without a word; a scan would fail at its first write.
        guard sqlite3_db_readonly(database.handle, "main") != 1 else {
            throw .cannotOpen(path: path, reason: "the file is read-only")
        }
        try database.useRollbackJournal(cacheBytes: cacheBytes)
        try database.quickCheck()
        try prepare(database)
        return database
    }

    /// The database's files (`-journal` too: left behind, SQLite would take it for the new file's hot journal and
    /// roll it back into it; `-wal` and `-shm` of an index from 0.2).
    private static let companionSuffixes = ["", "-journal", "-wal", "-shm"]

    /// Moves the database and its companions to `<path>.broken`, or `<path>.broken.2`, `.3`… whichever is free for
    /// all of them: an older broken file is never replaced. Each is linked to its new name first (`link` never
    /// replaces), and the old names are removed only once every link is made. Returns nil, having moved nothing,
    /// when that cannot be done: the damaged file is then kept, and the caller reports the damage.
    private static func moveAside(_ path: String) -> String? {
        let present = companionSuffixes.filter { FilePaths.exists(path + $0) }
        for attempt in 1...1000 {
            let aside = path + ".broken" + (attempt == 1 ? "" : ".\(attempt)")
            guard companionSuffixes.allSatisfy({ !FilePaths.exists(aside + $0) }) else { continue }
            var linked: [String] = []
            var failure: Errno?
            for suffix in present {
                do throws(Errno) { try FilePaths.link(path + suffix, to: aside + suffix) } catch {
                    failure = error
                    break
                }
                linked.append(suffix)
            }
            if let failure {
                // Still linked at the old name: nothing is lost.
                for suffix in linked { try? FilePaths.remove(aside + suffix) }
                if failure.code == EEXIST { continue }  // another process took this name just now
                return nil
            }
            for suffix in present.reversed() { try? FilePaths.remove(path + suffix) }  // the main file last
            return aside
        }
        return nil
    }

    /// Whether a statement that failed with `status`, first stepped at `started`, may be reset and run again.
    /// SQLite's busy handler never waits out `SQLITE_LOCKED`, and returns `SQLITE_BUSY` at once where waiting could
    /// deadlock; both are retried until the busy timeout has passed, but only outside an explicit transaction, where
    /// the reset releases every lock this connection held (inside one, waiting could never end the deadlock).
    fileprivate func isRetryable(_ status: Int32, since started: Int) -> Bool {
        let code = status & 0xFF
        guard code == SQLITE_BUSY || code == SQLITE_LOCKED, sqlite3_get_autocommit(handle) != 0 else { return false }
        return monotonicNanoseconds() - started < busyNanoseconds
    }

    // MARK: Errors

    fileprivate func error(_ status: Int32, detail: String? = nil) -> SQLiteError {
        Self.error(status, reason: detail ?? String(cString: sqlite3_errmsg(handle)), path: path, opening: false)
    }

    private static func error(_ status: Int32, reason: String, path: String, opening: Bool) -> SQLiteError {
        switch status & 0xFF {
        case SQLITE_CORRUPT, SQLITE_NOTADB: .corrupt(path: path, reason: reason)
        case SQLITE_BUSY, SQLITE_LOCKED: .locked(path: path, reason: reason)
        case SQLITE_CANTOPEN, SQLITE_PERM, SQLITE_AUTH: .cannotOpen(path: path, reason: reason)
        // The file or its folder is read-only (no journal can be made): said as such, never a file's own failure.
        case SQLITE_READONLY: .cannotOpen(path: path, reason: "the file or its folder is read-only (\(reason))")
        default: opening ? .cannotOpen(path: path, reason: reason) : .failed(path: path, code: status, reason: reason)
        }
    }

    private static func describe(_ status: Int32) -> String {
        sqlite3_errstr(status).map { String(cString: $0) } ?? "SQLite error \(status)"
    }
}

/// One prepared statement, owned by its connection's cache.
private final class SQLiteStatement {
    let handle: OpaquePointer
    private unowned let database: SQLiteDatabase
    /// Whether `step` has returned a row since the last `reset`.
    private var hasRows = false

    init(handle: OpaquePointer, database: SQLiteDatabase) {
        self.handle = handle
        self.database = database
    }

    deinit { sqlite3_finalize(handle) }

    /// `SQLITE_TRANSIENT`: SQLite copies the bytes before the call returns.
    private static var transient: sqlite3_destructor_type { unsafeBitCast(-1, to: sqlite3_destructor_type.self) }

    func bind(_ values: [SQLiteValue]) throws(SQLiteError) {
        let expected = Int(sqlite3_bind_parameter_count(handle))
        guard values.count == expected else {
            throw .failed(
                path: database.path, code: SQLITE_RANGE,
                reason: "statement takes \(expected) values, \(values.count) given")
        }
        for (offset, value) in values.enumerated() {
            let index = Int32(clamping: offset + 1)  // offset < the parameter count, itself an Int32
            let status: Int32
            switch value {
            case .null:
                status = sqlite3_bind_null(handle, index)
            case .integer(let number):
                status = sqlite3_bind_int64(handle, index, number)
            case .real(let number):
                status = sqlite3_bind_double(handle, index, number)
            case .text(let text):
                // withCString gives a pointer even for "" (a null pointer would bind NULL instead of empty text).
                // The 64-bit length is exact: text over SQLite's length limit is SQLITE_TOOBIG, never cut short.
                status = text.withCString {
                    sqlite3_bind_text64(handle, index, $0, UInt64(text.utf8.count), Self.transient, UInt8(SQLITE_UTF8))
                }
            case .blob(let bytes):
                status = bytes.withUnsafeBytes { raw in
                    // A zero-length blob still needs a non-null pointer, or SQLite binds NULL.
                    sqlite3_bind_blob64(
                        handle, index, raw.baseAddress ?? UnsafeRawPointer(bitPattern: 1), UInt64(raw.count),
                        Self.transient)
                }
            }
            guard status == SQLITE_OK else { throw database.error(status) }
        }
    }

    /// Advances to the next row: true when there is one, false when the statement is done. A lock that SQLite did
    /// not wait for is retried (`isRetryable`) before the first row, never after: no row is delivered twice.
    func step() throws(SQLiteError) -> Bool {
        let started = monotonicNanoseconds()
        while true {
            let status = sqlite3_step(handle)
            switch status {
            case SQLITE_ROW:
                hasRows = true
                return true
            case SQLITE_DONE:
                return false
            default:
                guard !hasRows, database.isRetryable(status, since: started) else { throw database.error(status) }
                sqlite3_reset(handle)  // keeps the bindings
                sleep(milliseconds: 2)
            }
        }
    }

    func reset() {
        hasRows = false
        sqlite3_reset(handle)
        sqlite3_clear_bindings(handle)
    }
}

/// The current row of a query, valid only inside the query's row callback.
struct SQLiteRow {
    fileprivate let statement: OpaquePointer

    func isNull(_ column: Int32) -> Bool { sqlite3_column_type(statement, column) == SQLITE_NULL }
    func integer(_ column: Int32) -> Int64 { sqlite3_column_int64(statement, column) }
    func optionalInteger(_ column: Int32) -> Int64? { isNull(column) ? nil : integer(column) }
    func real(_ column: Int32) -> Double { sqlite3_column_double(statement, column) }
    func optionalReal(_ column: Int32) -> Double? { isNull(column) ? nil : real(column) }
    func bool(_ column: Int32) -> Bool { integer(column) != 0 }
    func id(_ column: Int32) -> UInt64 { UInt64(bitPattern: integer(column)) }

    /// The first byte of a text or blob value (0 when empty or NULL), without copying the value.
    func firstByte(_ column: Int32) -> UInt8 {
        guard let bytes = sqlite3_column_text(statement, column), sqlite3_column_bytes(statement, column) > 0 else {
            return 0
        }
        return bytes[0]
    }

    /// Calls `body` with the bytes of a text or blob value (empty for NULL), without copying them.
    func withBytes<T>(_ column: Int32, _ body: (UnsafeBufferPointer<UInt8>) -> T) -> T {
        let count = Int(sqlite3_column_bytes(statement, column))
        guard count > 0, let bytes = sqlite3_column_blob(statement, column) else {
            return body(UnsafeBufferPointer(start: nil, count: 0))
        }
        return body(UnsafeBufferPointer(start: bytes.assumingMemoryBound(to: UInt8.self), count: count))
    }

    func text(_ column: Int32) -> String? {
        guard let bytes = sqlite3_column_text(statement, column) else { return nil }
        let count = Int(sqlite3_column_bytes(statement, column))
        return String(decoding: UnsafeBufferPointer(start: bytes, count: count), as: UTF8.self)
    }

    func blob(_ column: Int32) -> [UInt8]? {
        if isNull(column) { return nil }
        let count = Int(sqlite3_column_bytes(statement, column))
        guard count > 0, let bytes = sqlite3_column_blob(statement, column) else { return [] }
        return Array(UnsafeRawBufferPointer(start: bytes, count: count))
    }
}
