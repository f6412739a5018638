package storbench.ycsb;

import com.datastax.oss.driver.api.core.ConsistencyLevel;
import com.datastax.oss.driver.api.core.CqlSession;
import com.datastax.oss.driver.api.core.DefaultConsistencyLevel;
import com.datastax.oss.driver.api.core.config.DefaultDriverOption;
import com.datastax.oss.driver.api.core.config.DriverConfigLoader;
import com.datastax.oss.driver.api.core.cql.BoundStatement;
import com.datastax.oss.driver.api.core.cql.ColumnDefinition;
import com.datastax.oss.driver.api.core.cql.PreparedStatement;
import com.datastax.oss.driver.api.core.cql.ResultSet;
import com.datastax.oss.driver.api.core.cql.Row;
import com.datastax.oss.driver.api.core.metadata.EndPoint;
import com.datastax.oss.driver.api.core.ssl.SslEngineFactory;
import java.io.IOException;
import java.io.InputStream;
import java.net.InetSocketAddress;
import java.nio.file.Files;
import java.nio.file.Path;
import java.security.GeneralSecurityException;
import java.security.KeyStore;
import java.security.cert.Certificate;
import java.security.cert.CertificateFactory;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Properties;
import java.util.Set;
import java.util.TreeMap;
import java.util.Vector;
import java.util.concurrent.ConcurrentHashMap;
import javax.net.ssl.SSLContext;
import javax.net.ssl.SSLEngine;
import javax.net.ssl.SSLParameters;
import javax.net.ssl.TrustManagerFactory;
import site.ycsb.ByteIterator;
import site.ycsb.DB;
import site.ycsb.DBException;
import site.ycsb.Status;
import site.ycsb.StringByteIterator;

/**
 * A YCSB binding for Cassandra on the DataStax Java driver 4.x: read, scan, update, insert and delete on
 * {@code KEYSPACE.TABLE (y_id, field0..)} with prepared statements (one per statement text, prepared once),
 * one driver session shared by all of YCSB's client threads (the driver is thread-safe and pools its own
 * connections; a session per thread would only add connections).
 *
 * <p>Properties: {@code cassandra.hosts} (HOST:PORT,...), {@code cassandra.keyspace},
 * {@code cassandra.consistency} (ONE), {@code cassandra.timeout_ms} (12000), {@code cassandra.localdc} (the
 * contact points' own data center when unset). YCSB's {@code table} names the table. Credentials, when the
 * cluster wants them: {@code cassandra.username} and {@code cassandra.password} (storbench passes the password
 * in a 0600 properties file, {@code -P}, never on the command line or in the environment). TLS: {@code
 * cassandra.tls=true}, the nodes' certificate checked against the CA certificate (PEM) {@code
 * cassandra.tls_ca_file} or else the JDK's trust store, and the host name it names against the address dialled.
 */
public final class CqlDb extends DB {
  private static final Object LOCK = new Object();
  private static CqlSession session;
  private static int users;
  private static final Map<String, PreparedStatement> PREPARED = new ConcurrentHashMap<>();

  private String keyspace;

  @Override
  public void init() throws DBException {
    Properties props = getProperties();
    keyspace = require(props, "cassandra.keyspace");
    synchronized (LOCK) {
      if (session == null) {
        long start = System.nanoTime();
        session = open(props);
        // in YCSB's RunTime(ms) and its maxexecutiontime: said in the raw output
        System.err.printf("CqlDb: session open in %d ms%n", (System.nanoTime() - start) / 1_000_000);
        // the JVM's CPU so far (start-up, class loading, the session): the part of the client's rusage no
        // operation caused, for a comparison of the steady cost per operation
        var os = java.lang.management.ManagementFactory.getOperatingSystemMXBean();
        if (os instanceof com.sun.management.OperatingSystemMXBean) {
          System.err.printf("CqlDb: process CPU at session open %d ms%n",
              ((com.sun.management.OperatingSystemMXBean) os).getProcessCpuTime() / 1_000_000);
        }
      }
      users++;
    }
  }

  private static String require(Properties props, String name) throws DBException {
    String value = props.getProperty(name, "").trim();
    if (value.isEmpty()) {
      throw new DBException("CqlDb: property " + name + " is not set");
    }
    return value;
  }

  private static CqlSession open(Properties props) throws DBException {
    List<InetSocketAddress> points = new ArrayList<>();
    for (String point : require(props, "cassandra.hosts").split(",")) {
      int colon = point.lastIndexOf(':');
      points.add(new InetSocketAddress(point.substring(0, colon), Integer.parseInt(point.substring(colon + 1))));
    }
    ConsistencyLevel level = DefaultConsistencyLevel.valueOf(props.getProperty("cassandra.consistency", "ONE"));
    Duration timeout = Duration.ofMillis(Long.parseLong(props.getProperty("cassandra.timeout_ms", "12000")));
    String dc = props.getProperty("cassandra.localdc", "");
    DriverConfigLoader config = DriverConfigLoader.programmaticBuilder()
        .withString(DefaultDriverOption.REQUEST_CONSISTENCY, level.name())
        .withDuration(DefaultDriverOption.REQUEST_TIMEOUT, timeout)
        // no 2 s quiet period when the session closes: YCSB times its threads' cleanup into RunTime(ms)
        .withInt(DefaultDriverOption.NETTY_IO_SHUTDOWN_QUIET_PERIOD, 0)
        .withInt(DefaultDriverOption.NETTY_ADMIN_SHUTDOWN_QUIET_PERIOD, 0)
        // the schema of the run's keyspace only (its replication feeds token-aware routing): a quicker start
        .withStringList(DefaultDriverOption.METADATA_SCHEMA_REFRESHED_KEYSPACES,
            List.of(props.getProperty("cassandra.keyspace")))
        // the local DC is the contact points' own unless named: storbench's nodes use SimpleSnitch
        .withString(DefaultDriverOption.LOAD_BALANCING_POLICY_CLASS,
            dc.isEmpty() ? "DcInferringLoadBalancingPolicy" : "DefaultLoadBalancingPolicy")
        .build();
    try {
      var builder = CqlSession.builder().addContactPoints(points).withConfigLoader(config);
      if (Boolean.parseBoolean(props.getProperty("cassandra.tls", "false"))) {
        builder = builder.withSslEngineFactory(new Tls(sslContext(props.getProperty("cassandra.tls_ca_file", ""))));
      }
      String user = props.getProperty("cassandra.username", "");
      if (!user.isEmpty()) {
        builder = builder.withAuthCredentials(user, props.getProperty("cassandra.password", ""));
      }
      return (dc.isEmpty() ? builder : builder.withLocalDatacenter(dc)).build();
    } catch (RuntimeException e) {
      throw new DBException("CqlDb: cannot connect to " + points + ": " + e.getMessage(), e);
    }
  }

  /** A client context trusting the CA certificate(s) in {@code caFile} (PEM), or the JDK's trust store. */
  private static SSLContext sslContext(String caFile) throws DBException {
    try {
      TrustManagerFactory trust = TrustManagerFactory.getInstance(TrustManagerFactory.getDefaultAlgorithm());
      if (caFile.isEmpty()) {
        trust.init((KeyStore) null);
      } else {
        KeyStore store = KeyStore.getInstance(KeyStore.getDefaultType());
        store.load(null, null);
        try (InputStream in = Files.newInputStream(Path.of(caFile))) {
          int i = 0;
          for (Certificate cert : CertificateFactory.getInstance("X.509").generateCertificates(in)) {
            store.setCertificateEntry("ca" + i++, cert);
          }
        }
        trust.init(store);
      }
      SSLContext context = SSLContext.getInstance("TLS");
      context.init(null, trust.getTrustManagers(), null);
      return context;
    } catch (IOException | GeneralSecurityException e) {
      throw new DBException("CqlDb: cannot use the CA certificate " + caFile + ": " + e.getMessage(), e);
    }
  }

  /**
   * TLS engines that check the node's certificate names the address dialled (HTTPS rules: an IP address against
   * the certificate's IP entries). The driver's own factory names the host by a reverse DNS lookup instead.
   */
  private static final class Tls implements SslEngineFactory {
    private final SSLContext context;

    Tls(SSLContext context) {
      this.context = context;
    }

    @Override
    public SSLEngine newSslEngine(EndPoint endpoint) {
      InetSocketAddress address = (InetSocketAddress) endpoint.resolve();
      SSLEngine engine = context.createSSLEngine(address.getHostString(), address.getPort());
      engine.setUseClientMode(true);
      SSLParameters params = engine.getSSLParameters();
      params.setEndpointIdentificationAlgorithm("HTTPS");
      engine.setSSLParameters(params);
      return engine;
    }

    @Override
    public void close() {}
  }

  @Override
  public void cleanup() throws DBException {
    synchronized (LOCK) {
      if (--users == 0 && session != null) {
        session.close();
        session = null;
        PREPARED.clear();
      }
    }
  }

  private PreparedStatement prepared(String cql) {
    return PREPARED.computeIfAbsent(cql, session::prepare);
  }

  private String where(String table) {
    return keyspace + "." + table;
  }

  private static String columns(Set<String> fields) {
    return fields == null ? "*" : String.join(", ", fields);
  }

  private static HashMap<String, ByteIterator> fields(Row row) {
    HashMap<String, ByteIterator> out = new HashMap<>();
    for (ColumnDefinition column : row.getColumnDefinitions()) {
      String name = column.getName().asInternal();
      if (!name.equals("y_id")) {
        String value = row.getString(name);
        out.put(name, value == null ? null : new StringByteIterator(value));
      }
    }
    return out;
  }

  @Override
  public Status read(String table, String key, Set<String> fields, Map<String, ByteIterator> result) {
    try {
      Row row = session.execute(prepared("SELECT " + columns(fields) + " FROM " + where(table) + " WHERE y_id = ?")
          .bind(key)).one();
      if (row == null) {
        return Status.NOT_FOUND;
      }
      result.putAll(fields(row));
      return Status.OK;
    } catch (RuntimeException e) {
      return Status.ERROR;
    }
  }

  @Override
  public Status scan(String table, String startkey, int recordcount, Set<String> fields,
                     Vector<HashMap<String, ByteIterator>> result) {
    try {
      ResultSet rows = session.execute(prepared("SELECT " + columns(fields) + " FROM " + where(table)
          + " WHERE token(y_id) >= token(?) LIMIT ?").bind(startkey, recordcount));
      for (Row row : rows) {
        result.add(fields(row));
      }
      return Status.OK;
    } catch (RuntimeException e) {
      return Status.ERROR;
    }
  }

  @Override
  public Status update(String table, String key, Map<String, ByteIterator> values) {
    // sorted: one prepared statement per set of fields, whatever the map's order
    TreeMap<String, ByteIterator> sorted = new TreeMap<>(values);
    List<String> sets = new ArrayList<>();
    List<Object> binds = new ArrayList<>();
    for (Map.Entry<String, ByteIterator> e : sorted.entrySet()) {
      sets.add(e.getKey() + " = ?");
      binds.add(e.getValue().toString());
    }
    binds.add(key);
    return write(prepared("UPDATE " + where(table) + " SET " + String.join(", ", sets) + " WHERE y_id = ?"), binds);
  }

  @Override
  public Status insert(String table, String key, Map<String, ByteIterator> values) {
    TreeMap<String, ByteIterator> sorted = new TreeMap<>(values);
    List<Object> binds = new ArrayList<>();
    binds.add(key);
    for (ByteIterator value : sorted.values()) {
      binds.add(value.toString());
    }
    String marks = String.join(", ", java.util.Collections.nCopies(binds.size(), "?"));
    return write(prepared("INSERT INTO " + where(table) + " (y_id, " + String.join(", ", sorted.keySet())
        + ") VALUES (" + marks + ")"), binds);
  }

  @Override
  public Status delete(String table, String key) {
    return write(prepared("DELETE FROM " + where(table) + " WHERE y_id = ?"), List.of(key));
  }

  private Status write(PreparedStatement statement, List<Object> binds) {
    try {
      BoundStatement bound = statement.bind(binds.toArray());
      session.execute(bound);
      return Status.OK;
    } catch (RuntimeException e) {
      return Status.ERROR;
    }
  }
}
