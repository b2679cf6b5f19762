// A snapshot in an S3-compatible store, polled by ETag; the SDK throws an unchanged object's 304 as an error.
import { GetObjectCommand, HeadObjectCommand, S3Client, S3ServiceException } from '@aws-sdk/client-s3'
import { closeBody } from './download-object.js'
import { describeFetchError } from './http-source.js'
import { formatExtension, refuseEncoded, type Fetched, type RemoteSource, type Validators } from './remote-source.js'
import { SourceError } from '../errors.js'

export class S3Source implements RemoteSource {
  readonly shown: string
  readonly extension: RemoteSource['extension']
  private readonly bucket: string
  private readonly key: string
  private readonly client: S3Client

  constructor (url: URL, { forcePathStyle }: { forcePathStyle: boolean }, client?: S3Client) {
    this.bucket = url.hostname
    this.key = decodeURIComponent(url.pathname.slice(1))
    if (this.bucket === '' || this.key === '') throw new SourceError('an S3 source is s3://bucket/key')
    this.extension = formatExtension(this.key)
    this.shown = `s3://${this.bucket}/${this.key}`
    // The SDK retries throttling and 5xx itself (3 attempts); the follower's own poll does the rest.
    this.client = client ?? new S3Client({ forcePathStyle })
  }

  /** Through the same client: its connections and credentials. */
  sibling (name: string): S3Source {
    const url = new URL(`s3://${this.bucket}/`)
    url.pathname = `/${this.key.slice(0, this.key.lastIndexOf('/') + 1)}${name}`
    return new S3Source(url, { forcePathStyle: false }, this.client)
  }

  async fetch (known: Validators | null, signal: AbortSignal): Promise<Fetched> {
    try {
      const object = await this.client.send(new GetObjectCommand({
        Bucket: this.bucket,
        Key: this.key,
        ...(known?.etag != null ? { IfNoneMatch: known.etag } : {})
      }), { abortSignal: signal })
      if (object.Body === undefined) throw new SourceError(`${this.shown} answered without a body`)
      try {
        refuseEncoded(object.ContentEncoding, this.shown)
      } catch (error) {
        await closeBody(object.Body as AsyncIterable<Uint8Array>)
        throw error
      }
      return {
        changed: true,
        validators: { etag: object.ETag ?? null, lastModified: object.LastModified?.toUTCString() ?? null },
        length: object.ContentLength ?? null,
        body: object.Body as AsyncIterable<Uint8Array>
      }
    } catch (error) {
      if (statusOf(error) === 304) return { changed: false }
      throw describeS3Error(this.shown, error)
    }
  }

  async unchangedSince (validators: Validators, signal: AbortSignal): Promise<boolean> {
    try {
      const head = await this.client.send(
        new HeadObjectCommand({ Bucket: this.bucket, Key: this.key }),
        { abortSignal: signal }
      )
      return head.ETag === validators.etag
    } catch (error) {
      throw describeS3Error(this.shown, error)
    }
  }
}

export function describeS3Error (shown: string, error: unknown): SourceError {
  if (error instanceof SourceError) return error
  const status = statusOf(error)
  const name = (error as Error).name
  if (name === 'NoSuchBucket') return new SourceError(`${shown}: the bucket does not exist`)
  if (name === 'NoSuchKey' || status === 404) {
    return new SourceError(`${shown}: no such object`)
  }
  if (['InvalidAccessKeyId', 'SignatureDoesNotMatch', 'AccessDenied', 'ExpiredToken', 'InvalidToken'].includes(name) ||
    status === 403) {
    return new SourceError(
      `${shown}: access denied (${name}): check the credentials (AWS_ACCESS_KEY_ID, AWS_SECRET_ACCESS_KEY) and the bucket's policy`
    )
  }
  if (error instanceof S3ServiceException) {
    return new SourceError(`${shown}: the store answered ${status ?? '?'} ${name}`)
  }
  if (/region/i.test((error as Error).message)) {
    return new SourceError(`${shown}: no region is configured (set AWS_REGION)`)
  }
  if (/credential/i.test((error as Error).message)) {
    return new SourceError(
      `${shown}: no credentials found (set AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY, or a profile)`
    )
  }
  return new SourceError(`${shown} could not be reached: ${describeFetchError(error)}`)
}

export function statusOf (error: unknown): number | undefined {
  return (error as { $metadata?: { httpStatusCode?: number } }).$metadata?.httpStatusCode
}
