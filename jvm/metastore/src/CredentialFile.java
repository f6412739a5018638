// Writes one password into a Hadoop credential store (JCEKS) for the metastore's clients: Hive's client in
// PLAIN mode looks the password up by user name (Configuration.getPassword). Run as a single-file source
// program on the metastore's classpath: java -cp CP CredentialFile.java PROVIDER_URI ALIAS < password
// (the password comes on stdin: Hadoop's own `hadoop credential create` would want it on the command line).
import java.io.BufferedReader;
import java.io.InputStreamReader;
import java.nio.charset.StandardCharsets;
import org.apache.hadoop.conf.Configuration;
import org.apache.hadoop.security.alias.CredentialProvider;
import org.apache.hadoop.security.alias.CredentialProviderFactory;

public class CredentialFile {
  public static void main(String[] args) throws Exception {
    String password = new BufferedReader(new InputStreamReader(System.in, StandardCharsets.UTF_8)).readLine();
    Configuration conf = new Configuration(false);
    conf.set(CredentialProviderFactory.CREDENTIAL_PROVIDER_PATH, args[0]);
    CredentialProvider provider = CredentialProviderFactory.getProviders(conf).get(0);
    provider.createCredentialEntry(args[1], password.toCharArray());
    provider.flush();
  }
}
