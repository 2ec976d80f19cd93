import type { ReactNode } from 'react';

/** A readable empty state: what is missing and how to get it. */
export function EmptyState({ title, children }: { title: string; children?: ReactNode }) {
  return (
    <div className="empty" role="status">
      <h2>{title}</h2>
      {children && <div>{children}</div>}
    </div>
  );
}
