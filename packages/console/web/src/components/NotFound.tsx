import { Link } from '@tanstack/react-router';

export function NotFound() {
  return (
    <div className="empty">
      <h1>Page not found</h1>
      <p>
        There is no console page at this address. <Link to="/workers">Go to Workers</Link>
      </p>
    </div>
  );
}
