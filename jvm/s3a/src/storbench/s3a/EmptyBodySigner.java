package storbench.s3a;

import java.util.concurrent.CompletableFuture;

import software.amazon.awssdk.http.SdkHttpRequest;
import software.amazon.awssdk.http.auth.aws.signer.AwsV4FamilyHttpSigner;
import software.amazon.awssdk.http.auth.aws.signer.AwsV4HttpSigner;
import software.amazon.awssdk.http.auth.spi.signer.AsyncSignRequest;
import software.amazon.awssdk.http.auth.spi.signer.AsyncSignedRequest;
import software.amazon.awssdk.http.auth.spi.signer.HttpSigner;
import software.amazon.awssdk.http.auth.spi.signer.SignRequest;
import software.amazon.awssdk.http.auth.spi.signer.SignedRequest;
import software.amazon.awssdk.identity.spi.AwsCredentialsIdentity;

/**
 * The SDK's SigV4 signer, except that a request with an empty body is signed whole, not aws-chunked (issue 27).
 *
 * <p>Over plain HTTP the SDK signs every PutObject/UploadPart payload as aws-chunked
 * ({@code x-amz-content-sha256: STREAMING-AWS4-HMAC-SHA256-PAYLOAD}); for a 0-byte object (S3A's directory
 * markers, Spark's _SUCCESS) the body is only the final, empty chunk. Ceph 16 (pacific) RGW reads 0 bytes of
 * such a body (it trusts x-amz-decoded-content-length: 0), never sees that chunk's signature and answers
 * {@code 400 XAmzContentSHA256Mismatch}. Signed whole, the body's hash is the empty string's, which every
 * SigV4 server takes. Bodies with data are signed as the SDK would. Enabled by
 * {@code fs.s3a.http.signer.enabled=true} and {@code fs.s3a.http.signer.class=storbench.s3a.EmptyBodySigner}.
 */
public final class EmptyBodySigner implements HttpSigner<AwsCredentialsIdentity> {
    private final HttpSigner<AwsCredentialsIdentity> delegate = AwsV4HttpSigner.create();

    private static boolean empty(SdkHttpRequest request) {
        return request.firstMatchingHeader("Content-Length").map("0"::equals).orElse(false);
    }

    @Override
    public SignedRequest sign(SignRequest<? extends AwsCredentialsIdentity> request) {
        if (!empty(request.request())) {
            return delegate.sign(request);
        }
        return delegate.sign(unchunked(request));
    }

    @Override
    public CompletableFuture<AsyncSignedRequest> signAsync(AsyncSignRequest<? extends AwsCredentialsIdentity> request) {
        if (!empty(request.request())) {
            return delegate.signAsync(request);
        }
        return delegate.signAsync(unchunked(request));
    }

    private static <T extends AwsCredentialsIdentity> SignRequest<T> unchunked(SignRequest<T> request) {
        return request.copy(b -> b.putProperty(AwsV4FamilyHttpSigner.CHUNK_ENCODING_ENABLED, false));
    }

    private static <T extends AwsCredentialsIdentity> AsyncSignRequest<T> unchunked(AsyncSignRequest<T> request) {
        return request.copy(b -> b.putProperty(AwsV4FamilyHttpSigner.CHUNK_ENCODING_ENABLED, false));
    }
}
