/**
 * An error the sandbox's Iceberg REST catalog answers with: the spec's IcebergErrorResponse
 * (`{"error": {"message", "type", "code"}}`, open-api/rest-catalog-open-api.yaml of apache/iceberg
 * at 7f879b11366e17a676a03f15247a821751415529).
 */
export class CatalogHttpError extends Error {
  override name = 'CatalogHttpError';
  constructor(
    readonly status: number,
    /** The spec's error type, e.g. NoSuchTableException, CommitFailedException. */
    readonly type: string,
    message: string,
  ) {
    super(message);
  }

  body(): { error: { message: string; type: string; code: number } } {
    return { error: { message: this.message, type: this.type, code: this.status } };
  }
}
