import ChangeLog
import PostgresNIO

extension PostgresChangeLog {
    /// What the database keeps of a folder's log: the newest number handed
    /// out and the oldest kept (`latest + 1` when none is kept).
    struct Bounds: Sendable, Hashable {
        var latest: UInt64
        var oldest: UInt64
    }

    /// The log's SQL, each call one round trip or one transaction.
    enum Queries {
        static let columns = "seq, time_ns, event, origin_face, origin_client, origin_user, origin_method"

        /// The folder's bounds, registering the folder first when `create`;
        /// `nil` for a folder that has no log.
        static func open(folder: String, create: Bool, in database: Database) async throws(ChangeLogError) -> Bounds? {
            try await run(database, doing: "open the change log") { connection in
                if create {
                    try await connection.query(
                        "INSERT INTO change_log_folders (folder) VALUES (\(folder)) ON CONFLICT (folder) DO NOTHING",
                        logger: database.logger)
                }
                return try await bounds(folder: folder, on: connection, database: database)
            }
        }

        static func bounds(folder: String, on connection: PostgresConnection, database: Database) async throws
            -> Bounds?
        {
            let rows = try await connection.query(
                """
                SELECT f.last_seq, (SELECT min(seq) FROM change_log c WHERE c.folder = f.folder)
                FROM change_log_folders f WHERE f.folder = \(folder)
                """, logger: database.logger)
            for try await (latest, oldest) in rows.decode((Int64, Int64?).self) {
                let newest = UInt64(latest)
                return Bounds(latest: newest, oldest: oldest.map { UInt64($0) } ?? newest + 1)
            }
            return nil
        }

        /// Commits a batch of consecutive records, the folder's `last_seq`
        /// moving on with them — only from the number before the batch, so
        /// a second writer is caught (`.busy`) and nothing is interleaved.
        static func commit(_ batch: [ChangeRecord], folder: String, in database: Database)
            async throws(ChangeLogError)
        {
            guard let first = batch.first, let last = batch.last else { return }
            var seqs: [Int64] = []
            var times: [Int64] = []
            var events: [String] = []
            var faces: [String] = []
            var clients: [String] = []
            var users: [String] = []
            var methods: [String] = []
            for record in batch {
                seqs.append(Int64(record.seq))
                times.append(record.time)
                events.append(storable(record.event))
                // '' stands for none (NULLIF below): none of these is ever empty.
                faces.append(storable(record.origin?.face ?? ""))
                clients.append(storable(record.origin?.client ?? ""))
                users.append(storable(record.origin?.user ?? ""))
                methods.append(storable(record.origin?.method ?? ""))
            }
            let before = Int64(first.seq) - 1
            let newest = Int64(last.seq)
            let logger = database.logger
            let committed = try await transaction(database, doing: "commit to the change log") { connection in
                let moved = try await connection.query(
                    """
                    UPDATE change_log_folders SET last_seq = \(newest)
                    WHERE folder = \(folder) AND last_seq = \(before) RETURNING last_seq
                    """, logger: logger
                ).collect()
                guard !moved.isEmpty else { return false }
                try await connection.query(
                    """
                    INSERT INTO change_log (folder, \(unescaped: columns))
                    SELECT \(folder), s, t, e, NULLIF(f, ''), NULLIF(c, ''), NULLIF(u, ''), NULLIF(m, '')
                    FROM unnest(\(seqs)::int8[], \(times)::int8[], \(events)::text[], \(faces)::text[],
                        \(clients)::text[], \(users)::text[], \(methods)::text[]) AS r(s, t, e, f, c, u, m)
                    """, logger: logger)
                // Delivered at commit; only a wake-up for the readers.
                try await connection.query("SELECT pg_notify(\(PostgresChangeLog.channel), \(folder))", logger: logger)
                return true
            }
            guard committed else {
                throw ChangeLogError(
                    code: .busy,
                    message:
                        "another fileshare server wrote the change log of \(folder) since this one began: only one may write it"
                )
            }
        }

        /// Up to `limit` records after `cursor`, and the bounds read just after them.
        static func records(folder: String, after cursor: UInt64, limit: Int, in database: Database)
            async throws(ChangeLogError) -> ([ChangeRecord], Bounds)
        {
            try await run(database, doing: "read the change log") { connection in
                let rows = try await connection.query(
                    """
                    SELECT \(unescaped: columns) FROM change_log
                    WHERE folder = \(folder) AND seq > \(Int64(clamping: cursor)) ORDER BY seq LIMIT \(limit)
                    """, logger: database.logger)
                var records: [ChangeRecord] = []
                for try await (seq, time, event, face, client, user, method) in rows.decode(
                    (Int64, Int64, String, String?, String?, String?, String?).self)
                {
                    var origin: ChangeOrigin?
                    if let face, let client, let method {
                        origin = ChangeOrigin(face: face, client: client, user: user, method: method)
                    }
                    records.append(
                        ChangeRecord(seq: UInt64(seq), entry: ChangeLogEntry(event: event, time: time, origin: origin)))
                }
                let bounds = try await bounds(folder: folder, on: connection, database: database)
                return (records, bounds ?? Bounds(latest: 0, oldest: 1))
            }
        }

        /// Deletes what retention no longer keeps: beyond the newest
        /// `maxRecords`, and the records older than `oldestKept` (up to the
        /// first younger one, so what is left has no gap); returns the bounds after.
        static func trim(
            folder: String, keepingNewest maxRecords: UInt64, youngerThan oldestKept: Int64, in database: Database
        )
            async throws(ChangeLogError) -> Bounds
        {
            let keep = Int64(clamping: maxRecords)
            return try await transaction(database, doing: "trim the change log") { connection in
                try await connection.query(
                    """
                    DELETE FROM change_log WHERE folder = \(folder) AND seq <= (
                        SELECT GREATEST(
                            f.last_seq - \(keep),
                            COALESCE(
                                (SELECT min(seq) - 1 FROM change_log WHERE folder = f.folder AND time_ns >= \(oldestKept)),
                                f.last_seq))
                        FROM change_log_folders f WHERE f.folder = \(folder))
                    """, logger: database.logger)
                return try await bounds(folder: folder, on: connection, database: database)
                    ?? Bounds(latest: 0, oldest: 1)
            }
        }

        /// PostgreSQL's text holds no NUL: one would stop the writer for good.
        static func storable(_ text: String) -> String {
            text.utf8.contains(0) ? String(text.map { $0 == "\0" ? "\u{FFFD}" : $0 }) : text
        }

        static func run<Result: Sendable>(
            _ database: Database, doing what: String, _ body: (PostgresConnection) async throws -> Result
        ) async throws(ChangeLogError) -> Result {
            do {
                return try await database.withConnection(doing: what, body)
            } catch {
                throw ChangeLogError(error)
            }
        }

        static func transaction<Result: Sendable>(
            _ database: Database, doing what: String, _ body: (PostgresConnection) async throws -> Result
        ) async throws(ChangeLogError) -> Result {
            do {
                return try await database.withTransaction(doing: what, body)
            } catch {
                throw ChangeLogError(error)
            }
        }
    }
}

extension ChangeLogError {
    /// A database failure as the log reports it.
    init(_ error: DatabaseError) {
        let code: Code
        switch error.code {
        case .unavailable: code = .unavailable
        case .closed: code = .closed
        default: code = .io
        }
        self.init(code: code, message: error.message)
    }
}
