// `publish --to s3://bucket/prefix/`: a fleet's prefix in an S3-compatible store, through AWS's SDK and settings.
// Conditional writes: an object is created once (If-None-Match: *), the manifest replaced only if unchanged (If-Match).
import { createHash } from 'node:crypto'
import { createReadStream } from 'node:fs'
import { stat } from 'node:fs/promises'
import {
  GetObjectCommand, HeadObjectCommand, PutObjectCommand, S3Client, type HeadObjectCommandOutput
} from '@aws-sdk/client-s3'
import { Upload } from '@aws-sdk/lib-storage'
import { MANIFEST_SUFFIX } from '../schemas/manifest.js'
import { describeS3Error, statusOf } from '../sources/s3-source.js'
import { digestOf, type PublishTarget, type ReadManifest } from './publish-target.js'
import { PublishError } from '../errors.js'

export class S3Target implements PublishTarget {
  readonly shown: string
  readonly putVerb = 'Uploaded'
  private readonly bucket: string
  private readonly prefix: string
  private readonly client: S3Client

  constructor (url: URL, { forcePathStyle }: { forcePathStyle: boolean }) {
    this.bucket = url.hostname
    const path = decodeURIComponent(url.pathname.slice(1))
    // `s3://bucket/prefix` and `s3://bucket/prefix/` are the same folder.
    this.prefix = path === '' || path.endsWith('/') ? path : `${path}/`
    this.shown = `s3://${this.bucket}/${this.prefix}`
    this.client = new S3Client({ forcePathStyle })
  }

  close (): void {
    this.client.destroy()
  }

  async readManifest (): Promise<ReadManifest | null> {
    const key = this.prefix + MANIFEST_SUFFIX
    try {
      const object = await this.client.send(new GetObjectCommand({ Bucket: this.bucket, Key: key }))
      const text = await object.Body?.transformToString('utf8') ?? ''
      return { text, version: object.ETag ?? null }
    } catch (error) {
      if ((error as Error).name === 'NoSuchKey') return null
      throw this.failed(key, error)
    }
  }

  async putObject (name: string, file: string): Promise<'uploaded' | 'present'> {
    const key = this.prefix + name
    const shown = `s3://${this.bucket}/${key}`
    const { size } = await stat(file)
    // Before any byte goes up: a multipart upload would learn of the object only at its end.
    let head = await this.head(key)
    if (head === null) {
      try {
        // lib-storage, not ours: multipart above 5 MiB, parts retried alone, no 5 GiB limit, If-None-Match kept.
        await new Upload({
          client: this.client,
          partSize: partSizeFor(size),
          params: {
            Bucket: this.bucket,
            Key: key,
            Body: createReadStream(file),
            ContentLength: size,
            ContentType: contentTypeOf(name),
            IfNoneMatch: '*'
          }
        }).done()
        return 'uploaded'
      } catch (error) {
        if (statusOf(error) !== 412) throw this.failed(key, error)
      }
      // Another publisher created it meanwhile: If-None-Match refused this one.
      head = await this.head(key)
    }
    // Already there: the same bytes are a publish repeated, other bytes a name reused.
    if (head !== null && await this.holds(key, file, size, head)) return 'present'
    throw new PublishError(
      `${shown} is already published with other content: objects are immutable once published, so publish this one under another name`
    )
  }

  async writeManifest (text: string, expected: ReadManifest | null): Promise<void> {
    const key = this.prefix + MANIFEST_SUFFIX
    try {
      await this.client.send(new PutObjectCommand({
        Bucket: this.bucket,
        Key: key,
        Body: text,
        ContentType: 'application/json',
        // A cache in front of the bucket asks again every time: replicas poll it.
        CacheControl: 'no-cache',
        ...(expected?.version == null ? { IfNoneMatch: '*' } : { IfMatch: expected.version })
      }))
    } catch (error) {
      if (statusOf(error) === 412) {
        throw new PublishError(
          `s3://${this.bucket}/${key} changed while this was published (another publisher?): nothing replaced; run again`
        )
      }
      throw this.failed(key, error)
    }
  }

  private failed (key: string, error: unknown): PublishError {
    return new PublishError(describeS3Error(`s3://${this.bucket}/${key}`, error).message)
  }

  private async head (key: string): Promise<HeadObjectCommandOutput | null> {
    try {
      return await this.client.send(new HeadObjectCommand({ Bucket: this.bucket, Key: key }))
    } catch (error) {
      if (statusOf(error) === 404 || (error as Error).name === 'NotFound') return null
      throw this.failed(key, error)
    }
  }

  /** By size, then by ETag, else by the bytes themselves. */
  private async holds (key: string, file: string, size: number, head: HeadObjectCommandOutput): Promise<boolean> {
    try {
      if (head.ContentLength !== size) return false
      const etag = head.ETag?.replaceAll('"', '') ?? ''
      // An ETag equal to this file's MD5 (single upload) or multipart ETag (our part size) proves it, no download.
      if (/^[0-9a-f]{32}$/.test(etag) && etag === await digestOf(createReadStream(file), 'md5')) return true
      if (/^[0-9a-f]{32}-\d+$/.test(etag) && etag === await multipartEtagOf(file, partSizeFor(size))) return true
      // Other bytes, or an ETag that is no digest of them (another tool's part size, KMS encryption): compare.
      const object = await this.client.send(new GetObjectCommand({ Bucket: this.bucket, Key: key }))
      return await digestOf(object.Body as AsyncIterable<Uint8Array>, 'sha256') ===
        await digestOf(createReadStream(file), 'sha256')
    } catch (error) {
      throw this.failed(key, error)
    }
  }
}

/** lib-storage's default part size (5 MiB, more past 10,000 parts), passed to it so `multipartEtagOf` agrees. */
function partSizeFor (size: number): number {
  return Math.max(5 * 1024 * 1024, Math.ceil(size / 10_000))
}

/** S3's ETag for a multipart upload of `file` in `partSize` parts: MD5 of the parts' MD5s, `-`, the part count. */
export async function multipartEtagOf (file: string, partSize: number): Promise<string> {
  const { size } = await stat(file)
  const digests: Buffer[] = []
  for (let start = 0; start < size; start += partSize) {
    const part = createReadStream(file, { start, end: Math.min(size, start + partSize) - 1 })
    digests.push(Buffer.from(await digestOf(part, 'md5'), 'hex'))
  }
  return `${createHash('md5').update(Buffer.concat(digests)).digest('hex')}-${digests.length}`
}

function contentTypeOf (name: string): string {
  if (name.endsWith('.json')) return 'application/json'
  return name.endsWith('.image') ? 'application/octet-stream' : 'application/x-ndjson'
}
